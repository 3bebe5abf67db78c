import { writeSync } from 'node:fs'
import { mkdir, open, readdir, readFile, stat, truncate, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import {
  SessionError,
  type AttachmentMeta,
  type SessionEntry,
  type SessionHead,
  type SessionMeta,
  type SideWrite,
  type Storage,
  type StorageReader,
  type WriteSet,
} from '@colloquy/core'
import type { PageQuery } from '@colloquy/core/host'
import { attachmentFolderName, readAttachmentFolder, withAttachmentFiles } from './attachment-files.js'
import { AppendHandles } from './file-handles.js'
import { isSessionFileName, sessionFileName } from './file-names.js'
import {
  applySide,
  journalLine,
  journalLineInSlices,
  readJournal,
  syncDir,
  writeSnapshot,
  type JournalLine,
  type JournalState,
} from './journal.js'
import { HeadIndex, readIndexFile, writeIndexFile, type IndexRecord } from './head-index.js'
import { commitLines, parseFile, replay, type ParsedLine } from './jsonl.js'
import { migrateLegacyNames, moveAside } from './migrate-names.js'
import type { UsageSource } from '../../usage.js'
import { oneAtATime, slicer, WORK_BUDGETS } from '../../work.js'

export interface FileStorageOptions {
  /** The data directory: one `<slug>+<sha256>.jsonl` per session (see file-names.ts), bookkeeping in `.colloquy/`. */
  dir: string
  /** Flush the journal before a commit resolves, and session files at checkpoints (default true). */
  fsync?: boolean
  warn?: (message: string) => void
  /** Journal size that triggers a checkpoint (session files flushed, journal rewritten); default 64 MiB. */
  checkpointBytes?: number
  /**
   * Serve heads on demand (`Storage.paged`): `open` returns no head, and the engine holds a
   * bounded working set of them (`createServer({ maxHeads })`), listing through the head index.
   * Default false: every head is returned from the index at open (no session file read). Not
   * the default because a session the working set let go is read again inside the storage's
   * one queue of commits and reads, so one client's large commit delays another's first read
   * (S6 on this storage: a canary's p99 went from 13.6 ms to 210–510 ms under the mixed
   * flood with 500 heads held); PostgreSQL reads beside its commits and pages by default.
   */
  paged?: boolean
  /** Fault injection for crash tests: at a checkpoint at `tx`, its session files flushed, before the head index is written. */
  beforeIndexWrite?: (tx: number) => void | Promise<void>
  /** Fault injection for crash tests: at a checkpoint at `tx`, the head index written, before the journal is rewritten. */
  afterIndexWrite?: (tx: number) => void | Promise<void>
  /** Fault injection for crash tests: before a commit's journal line (nothing is written yet). */
  beforeCommitPoint?: (tx: number) => void | Promise<void>
  /** Fault injection for crash tests: the journal line is written, not yet flushed. */
  beforeFlush?: (tx: number) => void | Promise<void>
  /** Fault injection for crash tests: after the journal line, before the session files are written. */
  afterCommitPoint?: (tx: number) => void | Promise<void>
}

const ENOENT = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT'

/**
 * Appends to a session file on the main thread: a page-cache write takes microseconds, less
 * than a round trip through libuv's thread pool, and a commit writes one per session it touches.
 */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text)
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off)
}

/** `writeAll` of a long text in slices (`slicer`). */
async function writeAllInSlices(
  fd: number,
  text: string,
  built: (chars: number) => Promise<void>,
): Promise<void> {
  const buf = Buffer.from(text)
  for (let off = 0; off < buf.length;) {
    const end = Math.min(buf.length, off + 8 * WORK_BUDGETS.sliceChars)
    while (off < end) off += writeSync(fd, buf, off, end - off)
    await built(8 * WORK_BUDGETS.sliceChars)
  }
}

/** Where a session file stands after repair: its length, and its last transaction's first byte. */
interface FileState {
  end: number
  lastTx: number
  lastTxStart: number
}

/** One committed write a session file has not taken yet. */
type Pending = { tx: number; text: string } | { tx: number; delete: true }

/**
 * A session whose file could not be written after a commit point. The commit stands (the
 * journal has it); its writes wait here, in order, and are retried while every other session
 * goes on. Reads of the session see the file plus these writes, so nothing committed is hidden.
 */
interface Backlog {
  ops: Pending[]
  /** The file may hold part of `ops[0]`: cut it back before writing again. */
  cut: boolean
  error: string
}

const RETRY_MS = 1000

/**
 * Sessions written since the last checkpoint past which the next commit checkpoints: opening
 * reads the files of the sessions written since the last checkpoint, so this bounds what it reads.
 */
const TOUCHED_CHECKPOINT = 4096
/** Session files read at open past which the open checkpoints. */
const TOUCHED_AT_OPEN = 256
/** Sessions whose entry sizes are kept (see `sizesOf`). */
const SIZED_SESSIONS = 256

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

/**
 * The bytes a head counts for in quotas: its meta's JSON (`metaBytes`: measured, or as measured
 * before) and its attachments' sizes (as `Usage` counts them).
 */
const headBytes = (head: SessionHead, metaBytes: (meta: SessionMeta) => number = size): number =>
  metaBytes(head.meta) + (head.attachments ?? []).reduce((sum, a) => sum + a.size, 0)

/**
 * Seed-derived file storage. Each session is an append-only JSONL file of `meta` / `entry` /
 * `leaf` / `append` records replayed last-wins, each tagged with the transaction (`tx`) that
 * wrote it. A commit is one line in the journal (`.colloquy/journal.jsonl`) carrying the
 * records for every session file it touches, the files it deletes and its side records (the
 * change log); once that line is on disk (one flush per commit, however many sessions it
 * touches) the commit stands, and the session files are written after it.
 *
 * Nothing after the commit point can wedge the storage: file names are bounded hashes (no
 * ENAMETOOLONG, no two ids on one file), and a session file that cannot be written (a directory
 * in its place, a read-only file, a full disk) holds back that session alone: its writes wait
 * in a backlog that reads include, are retried on its next commit and every second, survive
 * checkpoints as journal lines, and are redone on open. On open, what a crash left out of the
 * session files is redone from the journal, torn tails are cut, and one bad record or file is
 * skipped with a warning, never thrown on: the server always starts on its data.
 *
 * Heads are indexed (`HeadIndex`): every session's head and stored bytes, kept in memory and
 * written to `.colloquy/heads.jsonl` at each checkpoint, before the journal is cut back. So the
 * index on disk and the journal's lines after it always say every head; opening reads the
 * index, then the files of the sessions the journal's remaining lines name (what the old open
 * did for every file: repair, redo, replay), not the others. A directory without an index (an
 * earlier version's), or with one that is damaged or older than the journal's last checkpoint,
 * has it rebuilt from every session file, warned about, never thrown on; it is only used once
 * written whole, so a rebuild cut short by a crash is simply done again. Quotas read the
 * index's per-owner sums (`UsageSource`): nothing is summed per session at open.
 */
export function fileStorage(options: FileStorageOptions): Storage & UsageSource & { readonly dir: string } {
  const dir = options.dir
  const home = join(dir, '.colloquy')
  const journalPath = join(home, 'journal.jsonl')
  const indexPath = join(home, 'heads.jsonl')
  const pagedOn = options.paged ?? false
  const fsync = options.fsync ?? true
  const checkpointBytes = options.checkpointBytes ?? 64 * 1024 * 1024
  const warn = options.warn ?? ((m: string) => console.warn(`[colloquy fileStorage] ${m}`))
  // A session's path is a SHA-256 of its id: computed once per session, not per commit (a
  // commit writes to every session it touches). Emptied past a bound; a miss only recomputes.
  const paths = new Map<string, string>()
  const pathOf = (id: string): string => {
    let path = paths.get(id)
    if (path === undefined) {
      if (paths.size >= 65_536) paths.clear()
      paths.set(id, (path = join(dir, sessionFileName(id))))
    }
    return path
  }

  const index = new HeadIndex()
  const heads = {
    get: (id: string): SessionHead | undefined => index.head(id),
    has: (id: string): boolean => index.get(id) !== undefined,
  }
  /** Sessions written since the last checkpoint (opening reads their files). */
  const touched = new Set<string>()
  /** Sessions with entries committed and no head yet (a bulk import's first chunks). */
  const headless = new Set<string>()
  /**
   * Entry sizes of the sessions written last (at most `SIZED_SESSIONS`), so an entry written
   * again is counted once: a session not among them has its entries read from its file when a
   * commit writes entries to it.
   */
  const sizes = new Map<string, Map<string, number>>()
  let journal: JournalState = { tx: 0, side: new Map(), checkpoint: 0, redo: [] }
  let journalSize = 0
  let nextCheckpoint = checkpointBytes
  let keptBytes = 0
  let autoKey = 0
  /** Session files written since the last checkpoint (flushed at the next one). */
  const dirty = new Set<string>()
  /** Sessions whose files are behind the journal, by id. */
  const backlog = new Map<string, Backlog>()
  /** Session files found on open that could not be read: their sessions are not served until they can. */
  const unreadable = new Set<string>()
  let lastRetry = 0
  const handles = new AppendHandles()
  // Commits and reads of entries take turns, so a read never sees half a commit.
  let queue: Promise<unknown> = Promise.resolve()
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn)
    queue = run.catch(() => {})
    return run
  }

  // Session files are parsed in slices, one file at a time and on one count of what was parsed
  // (a file's last part and the next file's first share a slice): a commit touching a thousand
  // sessions the working set let go reads them all at once (see `oneAtATime`).
  const parsing = oneAtATime()
  const parseSlices = slicer()

  const parsePath = async (
    name: string,
  ): Promise<{ lines: ParsedLine[]; buf: Buffer; sessionIds: Set<unknown> } | undefined> => {
    try {
      const buf = await readFile(join(dir, name))
      const parsed = await parsing(() => parseFile(buf, parseSlices))
      if (parsed.skipped) warn(`${name}: skipped ${parsed.skipped} malformed line(s)`)
      return {
        lines: parsed.unterminated ? [...parsed.lines, parsed.unterminated] : parsed.lines,
        buf,
        sessionIds: parsed.sessionIds,
      }
    } catch (e) {
      // A directory where a session file should be holds no records (and fails writes instead).
      if (ENOENT(e) || (e as NodeJS.ErrnoException).code === 'EISDIR') return undefined
      throw e
    }
  }

  /**
   * A session's records: its file's (those before a backlog's first write, which the file may
   * hold part of) followed by the backlog's. A backlog that deletes the file starts afresh.
   */
  const recordsOf = async (
    id: string,
  ): Promise<{ lines: ParsedLine[]; sessionIds: Set<unknown> } | undefined> => {
    const b = backlog.get(id)
    const lastDelete = b ? b.ops.map((op) => 'delete' in op).lastIndexOf(true) : -1
    let file: Awaited<ReturnType<typeof parsePath>>
    if (lastDelete < 0) {
      try {
        file = await parsePath(sessionFileName(id))
      } catch (e) {
        throw new SessionError('session/storage', `session ${id}: its file cannot be read (${String(e)})`, {
          cause: e,
        })
      }
    }
    if (!b) return file
    const from = b.ops[0].tx
    const lines = (file?.lines ?? []).filter((l) => (l.record.tx ?? 0) < from)
    const sessionIds = new Set(file?.sessionIds)
    const text = b.ops
      .slice(lastDelete + 1)
      .map((op) => ('text' in op ? op.text : ''))
      .join('')
    // The backlog's meta patches continue from the last meta the file holds before them.
    let base: SessionMeta | undefined
    for (const l of lines) if ('meta' in l.record) base = l.record.meta
    const queued = await parsing(() => parseFile(Buffer.from(text), parseSlices, base))
    for (const x of queued.sessionIds) sessionIds.add(x)
    if (!file && !text) return undefined
    return { lines: [...lines, ...queued.lines], sessionIds }
  }

  const readEntries = async (id: string): Promise<SessionEntry[]> => {
    if (backlog.has(id)) await drain(id)
    const file = await recordsOf(id)
    return file ? [...replay(file.lines.map((l) => l.record)).entries.values()] : []
  }

  /** Cuts a torn tail (and any record the journal never committed) and says where the file ends. */
  const repair = async (name: string, after: number): Promise<FileState | undefined> => {
    const file = await parsePath(name)
    if (!file) return undefined
    const path = join(dir, name)
    const first = file.lines.findIndex((l) => (l.record.tx ?? 0) > after)
    const kept = first < 0 ? file.lines : file.lines.slice(0, first)
    let end = kept.length ? kept[kept.length - 1].end : 0
    if (end < file.buf.length) {
      warn(`${name}: cutting ${file.buf.length - end} bytes of torn or uncommitted records`)
      await handles.drop(path)
      await truncate(path, end)
    }
    if (end > 0 && file.buf[end - 1] !== 10) {
      // A whole record that lost only its newline: keep it, finish the line.
      const fh = await open(path, 'a')
      await fh.write('\n').finally(() => fh.close())
      end++
    }
    const lastTx = kept.reduce((m, l) => Math.max(m, l.record.tx ?? 0), 0)
    let i = kept.length
    while (i > 0 && (kept[i - 1].record.tx ?? 0) === lastTx && lastTx > 0) i--
    return { end, lastTx, lastTxStart: i > 0 ? kept[i - 1].end : 0 }
  }

  /** Writes what a session's backlog holds, in order; whatever fails stays for the next try. */
  const drain = async (id: string): Promise<void> => {
    const b = backlog.get(id)
    if (!b) return
    const path = pathOf(id)
    try {
      if (b.cut && !('delete' in b.ops[0])) await repair(sessionFileName(id), b.ops[0].tx - 1)
      b.cut = false
      while (b.ops.length) {
        const op = b.ops[0]
        if ('delete' in op) {
          dirty.delete(path)
          await handles.drop(path)
          await unlink(path).catch((e: unknown) => (ENOENT(e) ? undefined : Promise.reject(e)))
        } else {
          b.cut = true
          writeAll((await handles.get(path)).fd, op.text)
          b.cut = false
          dirty.add(path)
        }
        b.ops.shift()
      }
      backlog.delete(id)
      warn(`${sessionFileName(id)}: caught up with the journal`)
    } catch (e) {
      await handles.drop(path)
      if (b.error !== String(e))
        warn(
          `${sessionFileName(id)}: session ${JSON.stringify(id).slice(0, 80)} cannot be written (${String(e)}); its commits wait in the journal and are retried`,
        )
      b.error = String(e)
    }
  }

  /** Adds committed writes to a session's file, or to its backlog when it has one or the write fails. */
  const write = async (id: string, op: Pending): Promise<void> => {
    let b = backlog.get(id)
    if (!b) {
      const path = pathOf(id)
      try {
        if ('delete' in op) {
          dirty.delete(path)
          await handles.drop(path)
          await unlink(path).catch((e: unknown) => (ENOENT(e) ? undefined : Promise.reject(e)))
        } else {
          writeAll((await handles.get(path)).fd, op.text)
          dirty.add(path)
        }
        return
      } catch (e) {
        backlog.set(id, (b = { ops: [], cut: true, error: '' }))
      }
    }
    b.ops.push(op)
    await drain(id)
  }

  const retryAll = async (): Promise<void> => {
    lastRetry = Date.now()
    for (const id of [...backlog.keys()]) await drain(id)
  }

  /** Attachment folders on disk at open (by name): a session without one has no attachments to read. */
  let folders = new Set<string>()
  const attachmentsOf = async (id: string): Promise<AttachmentMeta[]> =>
    folders.has(attachmentFolderName(id)) ? readAttachmentFolder(dir, id, warn) : []

  /** Replays one session file into its head and index record; files that are not one session's are moved aside. */
  const load = async (name: string, id: string | undefined): Promise<void> => {
    let file: Awaited<ReturnType<typeof recordsOf>>
    if (id !== undefined) index.delete(id)
    try {
      file = id !== undefined ? await recordsOf(id) : await parsePath(name)
    } catch (e) {
      unreadable.add(name)
      warn(
        `${name}: cannot be read (${String(e)}); its session is not served until it can be (restart once fixed)`,
      )
      return
    }
    if (!file) return
    const state = replay(file.lines.map((l) => l.record))
    const ids = [...file.sessionIds]
    const why = !state.meta
      ? 'no meta record'
      : ids.length > 1
        ? `records of ${ids.length} sessions`
        : sessionFileName(state.meta.session_id) !== name
          ? 'its records belong to another file name'
          : undefined
    if (why) {
      try {
        warn(`${name}: ${why}, moved aside to ${await moveAside(dir, name)}`)
      } catch (e) {
        warn(`${name}: ${why}, and could not be moved aside (${String(e)}); ignored`)
      }
      if (id !== undefined) backlog.delete(id)
      return
    }
    const sid = state.meta!.session_id
    const attachments = await attachmentsOf(sid)
    const head: SessionHead = Object.freeze({
      meta: state.meta!,
      leaf: state.leaf,
      // As committed; a file written before `v` was kept starts at 1, as every open once did.
      v: state.v ?? 1,
      ...(attachments.length && { attachments: Object.freeze(attachments) }),
    })
    let bytes = headBytes(head)
    for (const e of state.entries.values()) bytes += size(e)
    index.set(sid, { head, bytes })
  }

  /** Writes that wait in backlogs, as journal lines to keep after a checkpoint. */
  const backlogLines = (): JournalLine[] => {
    const out: JournalLine[] = []
    for (const [id, b] of backlog) {
      for (const op of b.ops)
        out.push(
          'delete' in op
            ? { tx: op.tx, side: [], v: 2, deleted: [id] }
            : { tx: op.tx, side: [], v: 2, writes: [[id, op.text]] },
        )
    }
    return out.sort((a, b) => a.tx - b.tx)
  }

  /**
   * Flushes every session file written since the last checkpoint, then shrinks the journal to one
   * snapshot line (plus the writes failing sessions still wait for). A failure leaves the journal
   * as it is: nothing is lost, the next checkpoint tries again.
   */
  const checkpoint = async (): Promise<void> => {
    if (backlog.size) await retryAll()
    try {
      if (fsync) {
        // A file that is gone, or that something else replaced, holds nothing of ours to flush.
        const gone = (e: unknown): boolean =>
          ENOENT(e) || ['EISDIR', 'ELOOP', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '')
        await Promise.all(
          [...dirty].map(async (path) => {
            try {
              await (await handles.get(path)).datasync()
            } catch (e) {
              if (!gone(e)) throw e
            }
          }),
        )
        await syncDir(dir)
      }
      // The head index first: once it is in place the journal's lines before it may go.
      await options.beforeIndexWrite?.(journal.tx)
      await writeIndexFile(indexPath, journal.tx, index.records, sessionFileName, fsync, slicer())
      await options.afterIndexWrite?.(journal.tx)
      await handles.drop(journalPath)
      const kept = backlogLines()
      journalSize = await writeSnapshot(journalPath, journal.tx, journal.side, fsync, kept, slicer())
      // Writes kept for failing sessions do not count towards the next checkpoint.
      keptBytes = kept.reduce((n, l) => n + Buffer.byteLength(journalLine(l)), 0)
    } catch (e) {
      warn(`checkpoint failed (${String(e)}); the journal keeps every commit until the next one`)
      nextCheckpoint = journalSize + checkpointBytes
      return
    }
    journal.checkpoint = journal.tx
    journal.redo = []
    dirty.clear()
    touched.clear()
    // Sessions a failing file holds back are in the journal still: opening reads them again.
    for (const id of backlog.keys()) touched.add(id)
    nextCheckpoint = checkpointBytes + keptBytes
  }

  const open_ = async (): Promise<SessionHead[]> => {
    await handles.closeAll()
    dirty.clear()
    backlog.clear()
    unreadable.clear()
    touched.clear()
    headless.clear()
    sizes.clear()
    index.clear()
    await mkdir(home, { recursive: true })
    // A journal that cannot be read as a file (a directory in its place) is moved aside: the
    // session files then stand as they are (nothing is cut back as uncommitted), and the next
    // commits number on from the last one they hold.
    let journalLost = false
    try {
      journal = await readJournal(journalPath, warn)
    } catch (e) {
      journalLost = true
      journal = { tx: 0, side: new Map(), checkpoint: 0, redo: [] }
      try {
        warn(
          `journal: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}); moved aside to ${await moveAside(dir, 'journal.jsonl', home)}, the session files are kept as they are`,
        )
      } catch (err) {
        throw new Error(`the journal can neither be read (${String(e)}) nor moved aside: ${String(err)}`, {
          cause: err,
        })
      }
    }
    for (const map of journal.side.values())
      for (const key of map.keys()) if (typeof key === 'number') autoKey = Math.max(autoKey, key)
    const migrated = await migrateLegacyNames(dir, fsync, warn)
    try {
      folders = new Set(await readdir(join(dir, 'attachments')))
    } catch {
      // No folder (or none readable: the attachment wrapper says so): no attachments to read.
      folders = new Set()
    }
    // The head index, unless it cannot say every head with the journal's lines after it.
    const stored = journalLost ? { missing: 'the journal was lost' } : await readIndexFile(indexPath)
    const rebuild =
      'missing' in stored
        ? stored.missing
        : stored.tx < journal.checkpoint
          ? `it is older than the journal's last checkpoint (${stored.tx} < ${journal.checkpoint})`
          : migrated
            ? 'session files of an earlier layout were renamed'
            : undefined
    const listed = (await readdir(dir)).filter(isSessionFileName)
    // The files to repair and read: every one when rebuilding, else those the journal's lines
    // name and those the index does not know (put there by hand, or by a crash mid-checkpoint).
    const named = new Map<string, string | undefined>()
    if (rebuild === undefined && !('missing' in stored)) {
      for (const [id, record] of stored.records) index.set(id, record)
      journal.tx = Math.max(journal.tx, stored.tx)
      for (const name of listed) if (!stored.files.has(name)) named.set(name, undefined)
      // A session file gone from the directory (removed by hand): its session is gone.
      const present = new Set(listed)
      for (const [name, id] of stored.files) if (!present.has(name)) named.set(name, id)
    } else if (rebuild !== 'absent' || listed.length) {
      let aside = ''
      if (rebuild !== 'absent' && 'missing' in stored) {
        try {
          aside = `; moved aside to ${await moveAside(dir, 'heads.jsonl', home)}`
        } catch (e) {
          aside = `; could not be moved aside (${String(e)})`
        }
      }
      warn(`head index: ${rebuild}; rebuilt from the session files${aside}`)
    }
    for (const line of journal.redo) {
      for (const id of line.deleted ?? []) named.set(sessionFileName(id), id)
      for (const [id] of line.writes ?? []) named.set(sessionFileName(id), id)
    }
    const files = new Map<string, FileState>()
    const names = rebuild !== undefined ? listed : [...named.keys()]
    for (const name of names) {
      try {
        const state = await repair(name, journalLost ? Number.MAX_SAFE_INTEGER : journal.tx)
        if (state) journal.tx = Math.max(journal.tx, state.lastTx)
        if (state) files.set(name, state)
      } catch (e) {
        unreadable.add(name)
        warn(
          `${name}: cannot be read (${String(e)}); its session is not served until it can be (restart once fixed)`,
        )
      }
    }
    // Redo what the journal committed and the session files may have missed: each session's
    // missing writes go to its backlog, which is then written (or kept, if the file still fails).
    const owners = new Map<string, string>()
    for (const line of journal.redo) {
      for (const id of line.deleted ?? []) {
        const name = sessionFileName(id)
        owners.set(name, id)
        const f = files.get(name)
        if ((f && f.lastTx < line.tx) || unreadable.has(name) || backlog.has(id)) {
          redoOp(id, { tx: line.tx, delete: true })
          files.delete(name)
        }
      }
      for (const [id, text] of line.writes ?? []) {
        const name = sessionFileName(id)
        owners.set(name, id)
        if (!text) continue
        const f = files.get(name) ?? { end: 0, lastTx: 0, lastTxStart: 0 }
        if (!backlog.has(id) && !unreadable.has(name)) {
          if (f.lastTx > line.tx) continue
          // The last transaction of a file may have been cut short: it is written again whole.
          if (f.lastTx === line.tx && f.end === f.lastTxStart + Buffer.byteLength(text)) continue
        }
        redoOp(id, { tx: line.tx, text })
      }
    }
    let redone = 0
    for (const [id, b] of backlog) {
      redone += b.ops.length
      await drain(id)
    }
    if (redone) warn(`journal: redid ${redone} session file write(s) a crash or a failing file had left out`)
    const all = new Set([
      ...(rebuild !== undefined ? (await readdir(dir)).filter(isSessionFileName) : named.keys()),
      ...[...backlog.keys()].map(sessionFileName),
    ])
    for (const name of all) {
      const id = owners.get(name) ?? named.get(name)
      if (!unreadable.has(name) || backlog.has(id ?? '')) await load(name, id)
      else if (id !== undefined) index.delete(id)
    }
    for (const id of backlog.keys()) touched.add(id)
    journalSize = (await stat(journalPath).catch(() => ({ size: 0 }))).size
    nextCheckpoint = checkpointBytes
    for (const name of all) {
      const id = owners.get(name) ?? named.get(name)
      if (id !== undefined) touched.add(id)
    }
    // A rebuilt index is written at once; so is one that had many files read (the next start
    // then reads none of them again).
    if (
      rebuild !== undefined ||
      redone ||
      journal.redo.length > 1000 ||
      touched.size > TOUCHED_AT_OPEN ||
      journalSize > checkpointBytes
    )
      await checkpoint()
    return pagedOn ? [] : [...index.records.values()].map((r) => r.head)
  }

  const redoOp = (id: string, op: Pending): void => {
    let b = backlog.get(id)
    if (!b) backlog.set(id, (b = { ops: [], cut: true, error: '' }))
    b.ops.push(op)
  }

  /**
   * The entry sizes of a session `SIZED_SESSIONS` keeps, read from its file when not (`stored`:
   * it may have entries there already), as the last one used.
   */
  const sizesOf = async (id: string, stored: boolean): Promise<Map<string, number>> => {
    let map = sizes.get(id)
    if (map) sizes.delete(id)
    else {
      map = new Map()
      if (stored) {
        try {
          for (const e of await readEntries(id)) map.set(e.id, size(e))
        } catch {
          // A file that cannot be read now holds the commit back no more than its write does:
          // its entries count as new (quotas err high), and it is read again next time.
          return map
        }
      }
      if (sizes.size >= SIZED_SESSIONS) sizes.delete(sizes.keys().next().value!)
    }
    sizes.set(id, map)
    return map
  }

  // The JSON size of the metas the last commits wrote (a few, as `sizes`), by the meta itself: an
  // append changes its session's meta (message count, time), so every commit takes the old
  // meta's size from its quota and adds the new one's. Measuring the old one again cost as much
  // as the new one, and a sealed meta's boxes make it several times a clear one's size.
  const metaSizes = new Map<SessionMeta, number>()
  const measured = (meta: SessionMeta): number => {
    const had = metaSizes.get(meta)
    if (had !== undefined) return had
    const n = size(meta)
    if (metaSizes.size >= SIZED_SESSIONS) metaSizes.delete(metaSizes.keys().next().value!)
    metaSizes.set(meta, n)
    return n
  }

  /**
   * The index records a commit leaves (undefined: the session has none), measured before its
   * commit point: the entry sizes it reads come from the files as they are before it.
   */
  const recordsFor = async (ws: WriteSet): Promise<Map<string, IndexRecord | undefined>> => {
    const out = new Map<string, IndexRecord | undefined>()
    for (const id of ws.deleted) out.set(id, undefined)
    for (const id of new Set([...ws.heads.keys(), ...ws.entries.keys()])) {
      const prev = ws.deleted.has(id) ? undefined : index.get(id)
      const head = ws.heads.get(id) ?? prev?.head
      const written = ws.entries.get(id)
      let entries = 0
      if (written?.size) {
        const stored = !ws.deleted.has(id) && (prev !== undefined || headless.has(id))
        if (ws.deleted.has(id)) sizes.delete(id)
        const known = await sizesOf(id, stored)
        for (const e of written.values()) {
          const n = size(e)
          entries += n - (known.get(e.id) ?? 0)
          known.set(e.id, n)
        }
        // A new session's entries written before its head count with it.
        if (!prev && head) {
          entries = 0
          for (const n of known.values()) entries += n
        }
      }
      if (!head) continue
      out.set(id, {
        head,
        bytes: prev
          ? prev.bytes - headBytes(prev.head, measured) + headBytes(head, measured) + entries
          : headBytes(head, measured) + entries,
      })
    }
    return out
  }

  const commit = async (ws: WriteSet): Promise<void> => {
    if (!ws.deleted.size && !ws.heads.size && !ws.entries.size && !ws.side.length) return
    const tx = journal.tx + 1
    const built = slicer()
    const deleted = [...ws.deleted].filter((id) => heads.has(id))
    const writes: Array<[string, string]> = []
    for (const id of new Set([...ws.heads.keys(), ...ws.entries.keys()])) {
      const prev = ws.deleted.has(id) ? undefined : heads.get(id)
      const text = commitLines(prev, ws.heads.get(id), [...(ws.entries.get(id)?.values() ?? [])], tx)
      // A head that changed in nothing its file records (its attachments) is named all the
      // same: opening reads again every session the journal's lines name.
      if (text || ws.heads.has(id)) writes.push([id, text])
      await built(text.length)
    }
    const records = await recordsFor(ws)
    const side: SideWrite[] = ws.side.map((w) => (w.key === undefined ? { ...w, key: ++autoKey } : w))
    await options.beforeCommitPoint?.(tx)
    const line = await journalLineInSlices(
      { tx, side, v: 2, ...(deleted.length && { deleted }), ...(writes.length && { writes }) },
      built,
    )
    const before = journalSize
    try {
      const fh = await handles.get(journalPath)
      // Written on the main thread like the session files (a hand-off to libuv's pool costs more
      // than the write); only the flush, which waits for the disk, goes to the pool. A crash
      // between slices leaves part of a line, which is no commit (`readJournal` drops it).
      await writeAllInSlices(fh.fd, line, built)
      await options.beforeFlush?.(tx)
      if (fsync) await fh.datasync()
    } catch (e) {
      await handles.drop(journalPath)
      await truncate(journalPath, before).catch((err: unknown) =>
        warn(`journal: could not cut a failed commit: ${String(err)}`),
      )
      // Sizes read or counted for this commit may be ahead of the files: measured afresh.
      for (const id of records.keys()) sizes.delete(id)
      throw e
    }
    // The commit stands from here: memory (the index) follows it, the session files are written next.
    journalSize += Buffer.byteLength(line)
    journal.tx = tx
    applySide(journal.side, side)
    for (const id of ws.deleted) {
      index.delete(id)
      headless.delete(id)
      if (!ws.entries.has(id)) sizes.delete(id)
    }
    for (const [id, record] of records) {
      if (record) index.set(id, record)
      touched.add(id)
    }
    for (const id of ws.entries.keys()) {
      if (records.get(id)) headless.delete(id)
      else headless.add(id)
    }
    await options.afterCommitPoint?.(tx)
    // Each session's writes fail alone: a file that cannot be written holds back its session only.
    for (const id of deleted) await write(id, { tx, delete: true })
    for (const [id, text] of writes) {
      if (!text) continue
      await write(id, { tx, text })
      await built(text.length)
    }
    if (backlog.size && Date.now() - lastRetry >= RETRY_MS) await retryAll()
    if (journalSize > nextCheckpoint || touched.size > TOUCHED_CHECKPOINT) await checkpoint()
  }

  return withAttachmentFiles(
    dir,
    {
      name: `file:${dir}`,
      dir,
      open: () => exclusive(open_),
      entries: (id) => exclusive(() => readEntries(id)),
      transact: (work) =>
        exclusive(async () => {
          const reader: StorageReader = { head: async (id) => heads.get(id), entries: readEntries }
          await commit(await work(reader))
        }),
      sideRecords: async (store) => {
        const map = journal.side.get(store)
        if (!map) return []
        return [...map.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, value]) => ({ key, value }))
      },
      unavailable: (id) => unreadable.has(sessionFileName(id)),
      // Reads of the index in memory, which follows each commit at its commit point.
      ...(pagedOn && {
        paged: {
          head: async (id: string) => index.head(id),
          page: (q: PageQuery) => index.page(q),
        },
      }),
      usageOf: async (owner) => index.usageOf(owner),
      sessionBytes: async (id) => index.get(id)?.bytes ?? 0,
      close() {
        void exclusive(() => handles.closeAll())
      },
    },
    {
      fsync,
      warn,
      *heads() {
        for (const r of index.records.values()) yield r.head
      },
    },
  )
}
