import { cp, readdir, readFile, rename } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { createStore, type Store } from '@colloquy/core'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { attachmentFolderName } from '../../packages/server/src/storage/file/attachment-files.js'
import { encodeId } from '../../packages/server/src/storage/file/file-names.js'
import { cleanupAfterEach } from './helpers.js'
import { PLACES, placeOf } from './data-dir-places.js'

// Every path the file storage touches, recorded at the file system calls themselves: whatever
// function builds a path (one added later included), its name reaches `node:fs` here. A workload
// of the most hostile valid ids must produce only names of the storage's grammar (bounded
// hashed names plus fixed suffixes, each at most 255 bytes), and the places it reads on open
// must be exactly those data-dir-places.ts plants bad entries in (data-dir.test.ts).
const seen = vi.hoisted(() => ({
  on: false,
  calls: [] as Array<{ fn: string; path: string }>,
  renames: [] as Array<[string, string]>,
}))

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<Record<string, unknown>>()
  const wrapped: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(real)) {
    wrapped[k] =
      typeof v !== 'function' || /^[A-Z]/.test(k)
        ? v
        : (...args: unknown[]) => {
            if (seen.on)
              for (const a of args.slice(0, 2)) if (typeof a === 'string') seen.calls.push({ fn: k, path: a })
            if (seen.on && k === 'rename') seen.renames.push([args[0] as string, args[1] as string])
            return (v as (...a: unknown[]) => unknown)(...args)
          }
  }
  return { ...wrapped, default: wrapped }
})
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<Record<string, unknown>>()
  const wrapped: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(real)) {
    wrapped[k] =
      typeof v !== 'function' || /^[A-Z]/.test(k)
        ? v
        : (...args: unknown[]) => {
            if (seen.on)
              for (const a of args.slice(0, 2))
                if (typeof a === 'string') seen.calls.push({ fn: `fs.${k}`, path: a })
            return (v as (...a: unknown[]) => unknown)(...args)
          }
  }
  return { ...wrapped, default: wrapped }
})

const { defer, dataDir } = cleanupAfterEach('names')

/** The most hostile valid ids: as long as allowed in bytes, multi-byte, folding twins, dot names, reserved names. */
const IDS = [
  'b'.repeat(255),
  'B'.repeat(255),
  '\u20ac'.repeat(85),
  '\u{1f600}'.repeat(63),
  '\u00e9'.repeat(127),
  'e\u0301'.repeat(85),
  'a'.repeat(249) + '.jsonl',
  '..',
  '.',
  '../escape',
  'a/b\\c',
  'CON',
  'aux.json',
  'x.d',
  'Chat-A',
  'chat-a',
  '%41',
  'A',
  'trailing. ',
  'nul\u0000byte',
  '.colloquy',
  'attachments',
]

async function open(dir: string): Promise<Store> {
  const store = await createStore({
    storage: fileStorage({ dir, fsync: true, checkpointBytes: 4096, warn: () => {} }),
    multiTab: false,
  })
  defer(() => store.close())
  return store
}

describe('every name the file storage derives is bounded and of its grammar', () => {
  it('a workload of hostile ids (sessions, attachments, forks, deletions, checkpoints, restarts) touches only names of the grammar', async () => {
    const dir = await dataDir()
    seen.calls.length = 0
    seen.on = true
    try {
      let store = await open(dir)
      for (const [i, session_id] of IDS.entries()) {
        await store.ensure({ session_id })
        const put = await store.putAttachment({
          session_id,
          name: 'x.bin',
          mime: 'text/plain',
          data: Buffer.from(session_id).toString('base64'),
        })
        await store.putAttachment({ session_id, name: 'y.bin', file: new Blob([`${i}`]) })
        await store.applyReplica(
          [
            {
              type: 'attachment',
              session_id,
              attachment: {
                ...put.attachment,
                attachment_id: IDS[(i + 1) % IDS.length],
                sha256: put.attachment.sha256,
              },
              bytes: new Blob([session_id]),
            },
          ],
          { policy: 'push' },
        )
        await store.append({ session_id, message: { role: 'user', content: [put.block], timestamp: 0 } })
        if (i % 3 === 0) {
          const [leaf] = (await store.messages({ session_id })).messages
          await store.fork({ session_id, entry_id: leaf.entry_id })
        }
        if (i % 4 === 1)
          await store.deleteAttachment({ session_id, attachment_id: IDS[(i + 1) % IDS.length] })
        if (i % 5 === 2) await store.delete({ session_id })
      }
      await store.close()
      store = await open(dir)
      for (const session_id of IDS) await store.listAttachments({ session_id }).catch(() => undefined)
      await store.close()
    } finally {
      seen.on = false
    }
    const inside = seen.calls.filter((c) => c.path === dir || c.path.startsWith(dir + sep))
    expect(inside.length).toBeGreaterThan(100)
    const bad = inside.filter((c) => {
      const rel = relative(dir, c.path)
      return placeOf(rel) === undefined || rel.split(sep).some((segment) => Buffer.byteLength(segment) > 255)
    })
    expect(bad.map((c) => `${c.fn} ${relative(dir, c.path).slice(0, 120)}`)).toStrictEqual([])
    // The places read on open (directories walked, files read) are the places bad entries are planted in.
    const read = new Set(
      inside
        .filter((c) => /readdir|readFile|openAsBlob/.test(c.fn))
        .map((c) => placeOf(relative(dir, c.path))!),
    )
    expect([...read].sort()).toStrictEqual(
      PLACES.filter((p) => p.readOnOpen)
        .map((p) => p.name)
        .sort(),
    )
  })
})

describe('the attachment folder migration survives a crash at every step', () => {
  it('stopped after any number of its renames, the next open finishes it, serves every attachment, and a further open renames nothing', async () => {
    // A data directory of the percent-encoded layout: two sessions, two attachments each.
    const template = await dataDir()
    const sessions = ['chat one', 'x'.repeat(60)]
    let store = await open(template)
    const expected: Array<[string, string, string]> = []
    for (const session_id of sessions) {
      await store.ensure({ session_id })
      for (const text of ['first', 'second']) {
        const { attachment } = await store.putAttachment({
          session_id,
          name: `${text}.txt`,
          mime: 'text/plain',
          data: Buffer.from(`${session_id} ${text}`).toString('base64'),
        })
        expected.push([session_id, attachment.attachment_id, `${session_id} ${text}`])
      }
    }
    await store.close()
    for (const session_id of sessions) {
      const current = join(template, 'attachments', attachmentFolderName(session_id))
      for (const name of await readdir(current)) {
        if (!name.endsWith('.json')) continue
        const meta = JSON.parse(await readFile(join(current, name), 'utf8')) as { attachment_id: string }
        await rename(join(current, name), join(current, `${encodeId(meta.attachment_id)}.json`))
      }
      await rename(current, join(template, 'attachments', `${encodeId(session_id)}.d`))
    }
    // The migration's renames, in order, as one open makes them.
    const probe = await dataDir()
    await cp(template, probe, { recursive: true })
    seen.renames.length = 0
    seen.on = true
    try {
      store = await open(probe)
      await store.close()
    } finally {
      seen.on = false
    }
    const steps = seen.renames
      .filter(([from]) => from.startsWith(join(probe, 'attachments') + sep))
      .map(([from, to]) => [relative(probe, from), relative(probe, to)] as const)
    expect(steps.length).toBe(sessions.length * 3)
    for (let k = 0; k <= steps.length; k++) {
      const dir = await dataDir()
      await cp(template, dir, { recursive: true })
      // A crash after k renames: the directory holds exactly those.
      for (const [from, to] of steps.slice(0, k)) await rename(join(dir, from), join(dir, to))
      store = await open(dir)
      for (const [session_id, attachment_id, text] of expected) {
        const blob = await store.getAttachmentBlob(session_id, attachment_id)
        expect(await blob?.text(), `after ${k} of ${steps.length} renames`).toBe(text)
      }
      await store.close()
      seen.renames.length = 0
      seen.on = true
      try {
        store = await open(dir)
        expect((await store.listAttachments({ session_id: sessions[0] })).attachments).toHaveLength(2)
        await store.close()
      } finally {
        seen.on = false
      }
      expect(seen.renames.filter(([from]) => from.startsWith(join(dir, 'attachments') + sep))).toStrictEqual(
        [],
      )
    }
  })
})
