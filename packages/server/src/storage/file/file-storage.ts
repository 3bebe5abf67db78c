import { writeSync } from 'node:fs'
import { mkdir, open, readdir, readFile, stat, truncate, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import {
  SessionError,
  type SessionEntry,
  type SessionHead,
  type SideWrite,
  type Storage,
  type StorageReader,
  type WriteSet,
} from '@colloquy/core'
import { withAttachmentFiles } from './attachment-files.js'
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
import { commitLines, parseFile, replay, type ParsedLine } from './jsonl.js'
import { migrateLegacyNames, moveAside } from './migrate-names.js'
import { slicer, WORK_BUDGETS } from '../../work.js'

export interface FileStorageOptions {
  /** The data directory: one `<slug>+<sha256>.jsonl` per session (see file-names.ts), bookkeeping in `.colloquy/`. */
  dir: string
  /** Flush the journal before a commit resolves, and session files at checkpoints (default true). */
  fsync?: boolean
  warn?: (message: string) => void
  /** Journal size that triggers a checkpoint (session files flushed, journal rewritten); default 64 MiB. */
  checkpointBytes?: number
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
 */
export function fileStorage(options: FileStorageOptions): Storage & { readonly dir: string } {
  const dir = options.dir
  const home = join(dir, '.colloquy')
  const journalPath = join(home, 'journal.jsonl')
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

  const heads = new Map<string, SessionHead>()
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

  const parsePath = async (
    name: string,
  ): Promise<{ lines: ParsedLine[]; buf: Buffer; sessionIds: Set<unknown> } | undefined> => {
    try {
      const buf = await readFile(join(dir, name))
      const parsed = parseFile(buf)
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
    const queued = parseFile(Buffer.from(text))
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

  /** Replays one session file into its head; files that are not one session's are moved aside. */
  const load = async (name: string, id: string | undefined): Promise<void> => {
    let file: Awaited<ReturnType<typeof recordsOf>>
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
    heads.set(state.meta!.session_id, Object.freeze({ meta: state.meta!, leaf: state.leaf, v: 1 }))
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
    nextCheckpoint = checkpointBytes + keptBytes
  }

  const open_ = async (): Promise<SessionHead[]> => {
    await handles.closeAll()
    dirty.clear()
    backlog.clear()
    unreadable.clear()
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
    await migrateLegacyNames(dir, fsync, warn)
    const files = new Map<string, FileState>()
    const names = (await readdir(dir)).filter(isSessionFileName)
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
        const f = files.get(name)
        if ((f && f.lastTx < line.tx) || unreadable.has(name) || backlog.has(id)) {
          redoOp(id, { tx: line.tx, delete: true })
          files.delete(name)
        }
      }
      for (const [id, text] of line.writes ?? []) {
        const name = sessionFileName(id)
        owners.set(name, id)
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
    heads.clear()
    const all = new Set([
      ...(await readdir(dir)).filter(isSessionFileName),
      ...[...backlog.keys()].map(sessionFileName),
    ])
    for (const name of all)
      if (!unreadable.has(name) || backlog.has(owners.get(name) ?? '')) await load(name, owners.get(name))
    journalSize = (await stat(journalPath).catch(() => ({ size: 0 }))).size
    nextCheckpoint = checkpointBytes
    if (redone || journal.redo.length > 1000 || journalSize > checkpointBytes) await checkpoint()
    return [...heads.values()]
  }

  const redoOp = (id: string, op: Pending): void => {
    let b = backlog.get(id)
    if (!b) backlog.set(id, (b = { ops: [], cut: true, error: '' }))
    b.ops.push(op)
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
      if (text) writes.push([id, text])
      await built(text.length)
    }
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
      throw e
    }
    // The commit stands from here: memory follows it, the session files are written next.
    journalSize += Buffer.byteLength(line)
    journal.tx = tx
    applySide(journal.side, side)
    for (const id of ws.deleted) heads.delete(id)
    for (const [id, head] of ws.heads) heads.set(id, head)
    await options.afterCommitPoint?.(tx)
    // Each session's writes fail alone: a file that cannot be written holds back its session only.
    for (const id of deleted) await write(id, { tx, delete: true })
    for (const [id, text] of writes) {
      await write(id, { tx, text })
      await built(text.length)
    }
    if (backlog.size && Date.now() - lastRetry >= RETRY_MS) await retryAll()
    if (journalSize > nextCheckpoint) await checkpoint()
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
      close() {
        void exclusive(() => handles.closeAll())
      },
    },
    { fsync, warn },
  )
}
