import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ReplicaChange } from '@colloquy/core'
import { sessionFileName } from '../../packages/server/src/storage/file/file-names.js'
import { cleanupAfterEach, pushChanges, rpc, startServer, user } from './helpers.js'

// Many users appending at once: their pushes share commits (one journal line and one flush for
// all of them), and an append is answered only once the commit that holds it is flushed.
const { defer, dataDir } = cleanupAfterEach('group-commit')

const USERS = 50
const CRASH_AT = 80

const meta = (session_id: string) => ({
  session_id,
  title: session_id,
  description: '',
  status: 'idle' as const,
  kind: 'user' as const,
  created_at: 1,
  updated_at: 1,
  message_count: 0,
})
const append = (session_id: string, i: number): ReplicaChange[] => [
  {
    type: 'entry',
    session_id,
    entry: {
      id: `e${i}`,
      parent_id: i === 0 ? null : `e${i - 1}`,
      timestamp: 2,
      revision: 0,
      kind: 'message',
      message: user(`${session_id} ${i}`),
    },
    base_revision: null,
  },
  { type: 'leaf', session_id, entry_id: `e${i}` },
]

/** Entry id → the commit (`tx`) that wrote it, from a session file. */
async function commitsOf(dir: string, session_id: string): Promise<Map<string, number>> {
  const text = await readFile(join(dir, sessionFileName(session_id)), 'utf8')
  const out = new Map<string, number>()
  for (const line of text.split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as { type: string; tx: number; entry?: { id: string } }
    if (r.entry) out.set(r.entry.id, r.tx)
  }
  return out
}

describe('group commit on the file storage', () => {
  it(`${USERS} users appending at once share flushes; killed just before a flush, nothing of that commit was answered and everything answered is on disk`, async () => {
    const dir = await dataDir()
    const tokensFile = join(dir, '..', `${dir.split('/').pop()}-tokens.json`)
    await writeFile(
      tokensFile,
      JSON.stringify(
        Object.fromEntries(Array.from({ length: USERS }, (_, k) => [`token-${k}`, `user-${k}`])),
      ),
    )
    defer(() => import('node:fs/promises').then((fs) => fs.rm(tokensFile, { force: true })))
    const a = await startServer([
      '--data-dir',
      dir,
      '--tokens-file',
      tokensFile,
      '--requests-per-second',
      '0',
      '--test-crash-before-flush',
      String(CRASH_AT),
    ])
    defer(() => a.stop('SIGKILL'))

    // Each user pushes one awaited append after another to its own session until the server dies.
    const acked: string[][] = Array.from({ length: USERS }, () => [])
    await Promise.all(
      Array.from({ length: USERS }, async (_, k) => {
        const session_id = `s-${k}`
        const token = `token-${k}`
        try {
          expect(
            (await pushChanges(a.url, [{ type: 'meta', meta: meta(session_id), create: true }], token))[0]
              .status,
          ).toBe('applied')
          for (let i = 0; ; i++) {
            const results = await pushChanges(a.url, append(session_id, i), token)
            expect(results.map((r) => r.status)).toStrictEqual(['applied', 'applied'])
            acked[k].push(`e${i}`)
          }
        } catch (e) {
          // The server died under this push: no answer came.
          if ((e as Error).name === 'AssertionError') throw e
        }
      }),
    )
    expect(await a.exited).toBe('SIGKILL')
    expect(acked.flat().length).toBeGreaterThan(0)

    const b = await startServer(['--data-dir', dir, '--tokens-file', tokensFile])
    defer(() => b.stop('SIGKILL'))
    for (let k = 0; k < USERS; k++) {
      // Every answered append is there, on its chain.
      const { messages } = await rpc(
        b.url,
        'session::messages',
        { session_id: `s-${k}`, limit: 1000 },
        `token-${k}`,
      )
      const ids = (messages as Array<{ entry_id: string }>).map((m) => m.entry_id)
      expect(ids.slice(0, acked[k].length), `user ${k}`).toStrictEqual(acked[k])
    }
    await b.stop()

    // Where each append landed: no answered append is in the commit that died before its flush,
    // and the commits before it carried several users' appends each.
    const sessionsPerCommit = new Map<number, Set<number>>()
    let unanswered = 0
    for (let k = 0; k < USERS; k++) {
      const commits = await commitsOf(dir, `s-${k}`)
      for (const id of acked[k]) expect(commits.get(id), `user ${k} ${id}`).toBeLessThan(CRASH_AT)
      for (const [id, tx] of commits) {
        if (tx === CRASH_AT) {
          expect(acked[k]).not.toContain(id)
          unanswered++
        }
        if (!sessionsPerCommit.has(tx)) sessionsPerCommit.set(tx, new Set())
        sessionsPerCommit.get(tx)!.add(k)
      }
    }
    // The line written before the kill is still in the journal (a process kill loses no page
    // cache): its appends came back on restart, unanswered, for their clients to retry.
    expect(unanswered).toBeGreaterThan(0)
    expect(
      Math.max(...[...sessionsPerCommit].filter(([tx]) => tx < CRASH_AT).map(([, users]) => users.size)),
    ).toBeGreaterThan(1)
  })
})
