import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionEntry, SessionHead, SessionMeta } from '@colloquy/core'
import { recordKey } from '../../../packages/server/src/changes/change-index.js'
import { sessionFileName } from '../../../packages/server/src/storage/file/file-names.js'
import { fileStorage } from '../../../packages/server/src/storage/file/file-storage.js'
import { writeIndexFile, type IndexRecord } from '../../../packages/server/src/storage/file/head-index.js'
import { writeSnapshot, type SideStores } from '../../../packages/server/src/storage/file/journal.js'
import { commitLines } from '../../../packages/server/src/storage/file/jsonl.js'
import { pushMutations } from '../../support/sync-push.js'
import { firstDifference } from './first-difference.js'

// A LOADER, not a measurement of the server: S5's sessions written straight into the file
// storage's layout (one session file each, the head index at `.colloquy/heads.jsonl`, the change
// log as the journal's checkpoint line), so that S7 can search 1,000,000 entries without S5's
// load through the API (833 s on a quiet machine). A few sessions go through a real server first,
// into a directory of their own, and what this loader writes for them is read back by the file
// storage itself beside what the server wrote: same records in each session file, same heads,
// entries and stored bytes, same change log up to its numbering. A loader that drifts from the
// server's commit path stops there, it does not load.

/** Sessions pushed through the server and compared (one push, as S5's loaders send them). */
const CHECKED = 3
/** The one transaction every loaded record belongs to (a checkpoint at it stands for them all). */
const TX = 1

type Changes = (s: number) => { sid: string; changes: unknown[] }

/** What the engine makes of a pushed session once its entries are in, shaped as the server's head of session 0. */
function headOf(sid: string, changes: readonly unknown[], template: SessionHead): SessionHead {
  const created = (changes[0] as { meta: SessionMeta }).meta
  const entries = entriesOf(changes)
  const meta: SessionMeta = {
    ...template.meta,
    ...created,
    message_count: template.meta.message_count,
    updated_at: created.created_at + (template.meta.updated_at - template.meta.created_at),
  }
  // The meta's keys in the order the server writes them (its JSON is the session file's bytes).
  const ordered = Object.fromEntries(
    Object.keys(template.meta).map((k) => [k, meta[k as keyof SessionMeta]]),
  ) as unknown as SessionMeta
  if (ordered.session_id !== sid) throw new Error(`file bulk load: ${sid}: meta names ${ordered.session_id}`)
  return { ...template, meta: ordered, leaf: entries[entries.length - 1].id }
}

const entriesOf = (changes: readonly unknown[]): SessionEntry[] =>
  changes
    .filter((c): c is { type: 'entry'; entry: SessionEntry } => (c as { type: string }).type === 'entry')
    .map((c) => c.entry)

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

/** A session as the loader writes it: its file's text, its head index record, its change records in order. */
function sessionOfLoad(
  sid: string,
  changes: readonly unknown[],
  template: SessionHead,
): { text: string; record: IndexRecord; changes: Array<{ kind: string; entry_id?: string }> } {
  const head = headOf(sid, changes, template)
  const entries = entriesOf(changes)
  return {
    text: commitLines(undefined, head, entries, TX),
    record: { head, bytes: size(head.meta) + entries.reduce((n, e) => n + size(e), 0) },
    changes: [
      { kind: 'created' },
      ...entries.map((e) => ({ kind: 'added', entry_id: e.id })),
      { kind: 'leaf' },
    ],
  }
}

/** Writes sessions `[0, sessions)` into `dir` (an empty data directory), `template` shaping each head. */
async function writeDir(
  dir: string,
  sessions: number,
  changesOf: Changes,
  template: SessionHead,
  log: (line: string) => void,
): Promise<void> {
  const t0 = performance.now()
  await mkdir(join(dir, '.colloquy'), { recursive: true })
  const records = new Map<string, IndexRecord>()
  const changeLog = new Map<string | number, unknown>()
  let seq = 0
  const tenth = Math.max(1, Math.floor(sessions / 10))
  for (let s = 0; s < sessions; s++) {
    const { sid, changes } = changesOf(s)
    const made = sessionOfLoad(sid, changes, template)
    await writeFile(join(dir, sessionFileName(sid)), made.text)
    records.set(sid, made.record)
    for (const c of made.changes) {
      const value = {
        kind: c.kind,
        session_id: sid,
        ...(c.entry_id !== undefined && { entry_id: c.entry_id }),
        seq: ++seq,
      }
      changeLog.set(recordKey(value as Parameters<typeof recordKey>[0]), value)
    }
    if ((s + 1) % tenth === 0)
      log(
        `  file bulk: ${(s + 1).toLocaleString('en-US')} sessions written, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      )
  }
  const side: SideStores = new Map([
    ['changes', changeLog],
    ['changelog', new Map<string | number, unknown>([['head', seq]])],
  ])
  // The head index and the journal as a checkpoint at TX leaves them: opening reads these two
  // files and no session file.
  await writeIndexFile(
    join(dir, '.colloquy', 'heads.jsonl'),
    TX,
    records,
    sessionFileName,
    false,
    async () => {},
  )
  await writeSnapshot(join(dir, '.colloquy', 'journal.jsonl'), TX, side, false)
}

/** A data directory as the file storage reads it back, for `sids`. */
async function readBack(dir: string, sids: readonly string[]): Promise<unknown> {
  const storage = fileStorage({
    dir,
    fsync: false,
    warn: (m) => {
      throw new Error(`file bulk load: ${dir}: ${m}`)
    },
  })
  try {
    const heads = new Map((await storage.open()).map((h) => [h.meta.session_id, h]))
    const out: Record<string, unknown> = {}
    for (const sid of sids) {
      // The file's records without their transaction numbers (one commit there, one checkpoint here).
      const text = await readFile(join(dir, sessionFileName(sid)), 'utf8')
      const records = text
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const { tx: _tx, ...r } = JSON.parse(l) as { tx: number }
          return r
        })
      out[sid] = {
        head: heads.get(sid),
        entries: await storage.entries(sid),
        bytes: await storage.sessionBytes(sid),
        records,
      }
    }
    // The change log by key; the sequence numbers as a set (the server numbers a push's sessions
    // interleaved, the loader one session after the other): each 1..n once.
    const changes = (await storage.sideRecords!('changes')) as Array<{ key: string; value: { seq: number } }>
    const seqs = changes.map((c) => c.value.seq).sort((a, b) => a - b)
    out.changes = Object.fromEntries(changes.map((c) => [c.key, { ...c.value, seq: 0 }]))
    out.seqs = seqs.every((n, i) => n === i + 1) ? seqs.length : `not 1..n: ${seqs.slice(0, 10).join(',')}`
    out.head = await storage.sideRecords!('changelog')
    out.sessions = heads.size
    return out
  } finally {
    storage.close()
  }
}

/**
 * Loads `sessions` sessions made by `changesOf(s)` (S5's data) into `dataDir` (absent or empty),
 * after checking the loader against a server: `serve(dir)` starts one on a data directory of its
 * own and gives its URL and a stop. Returns the milliseconds it took.
 */
export async function bulkLoadFile(
  dataDir: string,
  sessions: number,
  changesOf: Changes,
  serve: (dir: string) => Promise<{ url: string; stop: () => Promise<void> }>,
  log: (line: string) => void,
): Promise<number> {
  const t0 = performance.now()
  const scratch = await mkdtemp(join(tmpdir(), 'colloquy-file-bulk-'))
  try {
    const byServer = join(scratch, 'server')
    const server = await serve(byServer)
    try {
      const mutations: unknown[] = []
      for (let s = 0; s < CHECKED; s++)
        for (const change of changesOf(s).changes) mutations.push({ id: mutations.length, change })
      await pushMutations(server.url, 's5-file-bulk', mutations, { what: 'S5 file bulk load' })
    } finally {
      await server.stop()
    }
    const sids = Array.from({ length: CHECKED }, (_, s) => changesOf(s).sid)
    const template = await (async () => {
      const storage = fileStorage({ dir: byServer, fsync: false })
      try {
        const head = (await storage.open()).find((h) => h.meta.session_id === sids[0])
        if (!head) throw new Error(`file bulk load: the server holds no ${sids[0]}`)
        return head
      } finally {
        storage.close()
      }
    })()
    const byLoader = join(scratch, 'loader')
    await writeDir(byLoader, CHECKED, changesOf, template, () => {})
    const differs = firstDifference(await readBack(byLoader, sids), await readBack(byServer, sids), '')
    if (differs)
      throw new Error(`file bulk load: what the loader writes differs from the server's: ${differs}`)
    await writeDir(dataDir, sessions, changesOf, template, log)
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
  return performance.now() - t0
}
