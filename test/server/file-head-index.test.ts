import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore, type SessionHead, type SessionMeta, type Store } from '@colloquy/core'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { sessionFileName } from '../../packages/server/src/storage/file/file-names.js'
import { cleanupAfterEach, rpc, startServer, user, type ServerProcess } from './helpers.js'

// The file storage's head index (.colloquy/heads.jsonl) against a real server process killed at
// each point between a commit and the index on disk: what was acknowledged survives, and what
// the index serves is what the session files say.
const { defer, dataDir } = cleanupAfterEach('head-index')

/** `--test-working-set` counts the session files the process read; checkpoints follow every commit. */
async function serve(dir: string, ...args: string[]): Promise<ServerProcess> {
  const s = await startServer([
    '--data-dir',
    dir,
    '--test-working-set',
    '--test-checkpoint-bytes',
    '1',
    '--max-heads',
    '4',
    ...args,
  ])
  defer(() => s.stop('SIGKILL'))
  return s
}

const fileReads = async (url: string): Promise<number> =>
  ((await (await fetch(`${url}/test/working-set`)).json()) as { sessionFileReads: number }).sessionFileReads

/** Every session as `session::list` serves it (from the index), newest update first, in pages of 5. */
async function listed(url: string): Promise<SessionMeta[]> {
  const out: SessionMeta[] = []
  let cursor: string | undefined
  do {
    const page = await rpc<{ sessions: SessionMeta[]; next_cursor?: string }>(url, 'session::list', {
      limit: 5,
      order: 'updated_desc',
      ...(cursor && { cursor }),
    })
    out.push(...page.sessions)
    cursor = page.next_cursor
  } while (cursor)
  return out
}

const texts = async (url: string, session_id: string): Promise<string[]> =>
  (await rpc(url, 'session::messages', { session_id })).messages.map(
    (m: { message: { content: Array<{ text: string }> } }) => m.message.content[0].text,
  )

/** The journal's last transaction: what the next commit is numbered after. */
async function lastTx(dir: string): Promise<number> {
  const lines = (await readFile(join(dir, '.colloquy', 'journal.jsonl'), 'utf8')).trim().split('\n')
  return Math.max(...lines.map((l) => (JSON.parse(l) as { tx: number }).tx))
}

/** Twelve sessions of one message each, the server stopped; their ids. */
async function seed(dir: string): Promise<string[]> {
  const s = await serve(dir)
  const ids: string[] = []
  for (let i = 0; i < 12; i++) {
    const { session_id } = await rpc(s.url, 'session::create', { title: `chat ${i}` })
    await rpc(s.url, 'session::append', { session_id, message: user(`hello ${i}`) })
    ids.push(session_id)
  }
  await s.stop()
  return ids
}

/**
 * What the index serves equals what the session files say: the list of a server whose index
 * was removed (rebuilt from every session file) is the same, meta for meta.
 */
async function agreesWithFiles(dir: string, served: SessionMeta[]): Promise<void> {
  await rm(join(dir, '.colloquy', 'heads.jsonl'))
  const rebuilt = await serve(dir)
  expect(rebuilt.output()).toMatch(/head index: absent; rebuilt from the session files/)
  expect(await listed(rebuilt.url)).toStrictEqual(served)
  await rebuilt.stop()
}

describe('the head index of the file storage across crashes', () => {
  for (const [flag, when] of [
    ['--test-crash-at-commit', 'after a commit point, before the session files and the index'],
    ['--test-crash-before-index', 'at a checkpoint, session files flushed, before the index is written'],
    ['--test-crash-after-index', 'at a checkpoint, the index written, before the journal is cut back'],
  ] as const) {
    it(`killed ${when}: nothing acknowledged is lost, the index agrees with the files, and the restart reads only the sessions written since the index`, async () => {
      const dir = await dataDir()
      const ids = await seed(dir)
      // Two appends acknowledged, the third killed at `flag`.
      const crash = (await lastTx(dir)) + 3
      const a = await serve(dir, flag, String(crash))
      expect(await fileReads(a.url)).toBe(0)
      await rpc(a.url, 'session::append', { session_id: ids[3], message: user('acknowledged 1') })
      await rpc(a.url, 'session::append', { session_id: ids[7], message: user('acknowledged 2') })
      await expect(
        rpc(a.url, 'session::append', { session_id: ids[5], message: user('in flight') }),
      ).rejects.toThrow()
      expect(await a.exited).toBe('SIGKILL')

      const b = await serve(dir)
      // The index on disk is older than the journal by at most these three sessions: opening read their files alone.
      expect(await fileReads(b.url)).toBeLessThanOrEqual(3)
      expect(await texts(b.url, ids[3])).toStrictEqual(['hello 3', 'acknowledged 1'])
      expect(await texts(b.url, ids[7])).toStrictEqual(['hello 7', 'acknowledged 2'])
      // Committed (its journal line is on disk) before the kill: kept, though never acknowledged.
      expect(await texts(b.url, ids[5])).toStrictEqual(['hello 5', 'in flight'])
      const served = await listed(b.url)
      expect(served.map((m) => m.session_id).slice(0, 3)).toStrictEqual([ids[5], ids[7], ids[3]])
      expect(served).toHaveLength(12)
      for (const m of served)
        expect(m.message_count).toBe([3, 5, 7].includes(ids.indexOf(m.session_id)) ? 2 : 1)
      await b.stop()
      await agreesWithFiles(dir, served)
    })
  }

  it('a restart over a current index reads no session file; a data directory without one (an earlier version) is indexed once', async () => {
    const dir = await dataDir()
    const ids = await seed(dir)
    const a = await serve(dir)
    expect(await fileReads(a.url)).toBe(0)
    expect(await listed(a.url)).toHaveLength(12)
    await a.stop()
    // As an earlier version left it: no index.
    await rm(join(dir, '.colloquy', 'heads.jsonl'))
    const b = await serve(dir)
    // Every file read (repaired, then replayed).
    expect(await fileReads(b.url)).toBeGreaterThanOrEqual(12)
    const served = await listed(b.url)
    expect(served.map((m) => m.session_id).sort()).toStrictEqual([...ids].sort())
    await b.stop()
    const c = await serve(dir)
    expect(await fileReads(c.url)).toBe(0)
    expect(c.output()).not.toMatch(/head index/)
    expect(await listed(c.url)).toStrictEqual(served)
    await c.stop()
    // A session file put there by hand is read and served; one removed by hand is gone.
    const planted = { session_id: 'planted', title: 'put here by hand', created_at: 1, updated_at: 1 }
    await writeFile(
      join(dir, sessionFileName('planted')),
      JSON.stringify({ type: 'meta', meta: planted }) + '\n',
    )
    await rm(join(dir, sessionFileName(ids[0])))
    const d = await serve(dir)
    // Those two files alone: each repaired and replayed, the planted one read once more as the
    // change log logs it (the removed one's reads find nothing).
    expect(await fileReads(d.url)).toBe(5)
    const now = await listed(d.url)
    expect(now.map((m) => m.session_id).sort()).toStrictEqual([...ids.slice(1), 'planted'].sort())
    expect(now.find((m) => m.session_id === 'planted')!.title).toBe('put here by hand')
  })

  it('a damaged index is rebuilt from the session files, never a failed start', async () => {
    const dir = await dataDir()
    const ids = await seed(dir)
    const path = join(dir, '.colloquy', 'heads.jsonl')
    const text = await readFile(path, 'utf8')
    // One record changed in place: the checksum no longer matches.
    await writeFile(path, text.replace('"chat 4"', '"chat X"'))
    const a = await serve(dir)
    expect(a.output()).toMatch(/head index: its checksum does not match; rebuilt from the session files/)
    const served = await listed(a.url)
    expect(served.find((m) => m.session_id === ids[4])!.title).toBe('chat 4')
    expect(served).toHaveLength(12)
    await a.stop()
    await agreesWithFiles(dir, served)
  })
})

describe("a head's version across restarts of a real server", () => {
  it('every head is served after a restart with the very `v` it had: stopped, killed, with and without checkpoints since', async () => {
    const dir = await dataDir()
    const heads = async (url: string, ids: string[]): Promise<Record<string, SessionHead>> =>
      (
        (await (await fetch(`${url}/test/working-set?ids=${ids.join(',')}`)).json()) as {
          heads: Record<string, SessionHead>
        }
      ).heads
    // Every head held (no working set), so the route says each one.
    const start = async (...args: string[]): Promise<ServerProcess> => {
      const s = await startServer(['--data-dir', dir, '--test-working-set', ...args])
      defer(() => s.stop('SIGKILL'))
      return s
    }
    // No checkpoint while it runs: a restart reads every session written again from its file.
    const a = await start()
    const ids: string[] = []
    let first = ''
    for (let i = 0; i < 3; i++) {
      const { session_id } = await rpc(a.url, 'session::create', { title: `chat ${i}` })
      for (let j = 0; j <= i; j++) {
        const { entry_id } = await rpc(a.url, 'session::append', { session_id, message: user(`m${j}`) })
        if (j === 0) first = entry_id
      }
      ids.push(session_id)
    }
    await rpc(a.url, 'session::set-active-leaf', { session_id: ids[2], entry_id: first })
    const before = await heads(a.url, ids)
    expect(ids.map((id) => before[id].v)).toStrictEqual([2, 3, 5])
    await a.stop('SIGKILL')

    const b = await start('--test-checkpoint-bytes', '1')
    expect(await heads(b.url, ids)).toStrictEqual(before)
    // Checkpointed after every commit from here: the next start reads the head index.
    await rpc(b.url, 'session::append', { session_id: ids[0], message: user('one more') })
    const after = await heads(b.url, ids)
    expect(after[ids[0]].v).toBe(3)
    await b.stop()
    const c = await start()
    expect(await fileReads(c.url)).toBe(0)
    expect(await heads(c.url, ids)).toStrictEqual(after)
  })
})

describe("the head index's usage (what quotas read)", () => {
  it('kept commit by commit, it equals a count from the session files: appends, an entry updated in place, attachments, deletions, a fork, a restart between', async () => {
    const dir = await dataDir()
    let t = 1_000_000
    const open = async (): Promise<{ store: Store; storage: ReturnType<typeof fileStorage> }> => {
      const storage = fileStorage({ dir, warn: () => {} })
      const store = await createStore({ storage, now: () => ++t, multiTab: false })
      defer(() => store.close())
      return { store, storage }
    }
    const figures = async (storage: ReturnType<typeof fileStorage>) => ({
      all: await storage.usageOf(null),
      alice: await storage.usageOf('alice'),
      bob: await storage.usageOf('bob'),
    })
    let { store } = await open()
    const a = (await store.create({ title: 'a', metadata: { owner: 'alice' } })).session_id
    const b = (await store.create({ title: 'b', metadata: { owner: 'bob' } })).session_id
    const gone = (await store.create({ title: 'gone', metadata: { owner: 'alice' } })).session_id
    const first = await store.append({ session_id: a, message: user('one') })
    await store.append({ session_id: a, message: user('two, a little longer') })
    await store.append({ session_id: b, message: user('bob') })
    await store.append({ session_id: gone, message: user('soon gone') })
    await store.close()
    // A new process: the entry sizes it has not seen are read from the file when one is replaced.
    const reopened = await open()
    store = reopened.store
    await store.updateMessage({
      session_id: a,
      entry_id: first.entry_id,
      content: [{ type: 'text', text: 'one, edited to be much longer than it was' }],
    })
    await store.putAttachment({
      session_id: b,
      name: 'n.txt',
      mime: 'text/plain',
      data: Buffer.from('twelve bytes').toString('base64'),
    })
    await store.delete({ session_id: gone })
    const [leaf] = (await store.messages({ session_id: a })).messages
    await store.fork({ session_id: a, entry_id: leaf.entry_id })
    await store.flush()
    const kept = await figures(reopened.storage)
    expect(kept.alice.sessions).toBe(2)
    expect(kept.bob.sessions).toBe(1)
    expect(kept.all.sessions).toBe(3)
    expect(kept.bob.bytes).toBeGreaterThan(12)
    await store.close()
    // The same figures counted afresh from every session file (the index removed, so rebuilt).
    await rm(join(dir, '.colloquy', 'heads.jsonl'))
    expect(await figures((await open()).storage)).toStrictEqual(kept)
  })
})
