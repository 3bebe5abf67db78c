import { writeSync } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, stat, truncate, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { SessionError, type SessionEntry, type SessionHead, type SideWrite, type Storage, type StorageReader, type WriteSet } from '@colloquy/core'
import { withAttachmentFiles } from './attachment-files.js'
import { AppendHandles } from './file-handles.js'
import { sessionFileName, sessionIdOfFile } from './file-names.js'
import { applySide, journalLine, readJournal, syncDir, writeSnapshot, type JournalState } from './journal.js'
import { commitLines, parseFile, replay, type ParsedLine } from './jsonl.js'

export interface FileStorageOptions {
  /** The data directory: one `<encoded id>.jsonl` per session, bookkeeping in `.colloquy/`. */
  dir: string
  /** Flush the journal before a commit resolves, and session files at checkpoints (default true). */
  fsync?: boolean
  warn?: (message: string) => void
  /** Journal size that triggers a checkpoint (session files flushed, journal rewritten); default 64 MiB. */
  checkpointBytes?: number
  /** Fault injection for crash tests: before a commit's journal line (nothing is written yet). */
  beforeCommitPoint?: (tx: number) => void | Promise<void>
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
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off)
}

/** Where a session file stands after repair: its length, and its last transaction's first byte. */
interface FileState {
  end: number
  lastTx: number
  lastTxStart: number
}

/**
 * Seed-compatible file storage. Each session is an append-only JSONL file of `meta` / `entry` /
 * `leaf` / `append` records replayed last-wins, each tagged with the transaction (`tx`) that
 * wrote it. A commit is one line in the journal (`.colloquy/journal.jsonl`) carrying the
 * records for every session file it touches, the files it deletes and its side records (the
 * change log); once that line is on disk (one flush per commit, however many sessions it
 * touches) the commit stands, and the session files are written after it. On open, what a
 * crash left out of the session files is redone from the journal and torn tails are cut, so
 * session files and change log agree. Checkpoints flush the session files and shrink the
 * journal to one snapshot line.
 */
export function fileStorage(options: FileStorageOptions): Storage & { readonly dir: string } {
  const dir = options.dir
  const home = join(dir, '.colloquy')
  const journalPath = join(home, 'journal.jsonl')
  const fsync = options.fsync ?? true
  const checkpointBytes = options.checkpointBytes ?? 64 * 1024 * 1024
  const warn = options.warn ?? ((m: string) => console.warn(`[colloquy fileStorage] ${m}`))
  const pathOf = (id: string): string => join(dir, sessionFileName(id))

  const heads = new Map<string, SessionHead>()
  let journal: JournalState = { tx: 0, side: new Map(), checkpoint: 0, redo: [] }
  let journalSize = 0
  let autoKey = 0
  /** Session files written since the last checkpoint (flushed at the next one). */
  const dirty = new Set<string>()
  /** Set when session files could not be written after a commit point: reopen to redo them. */
  let broken: SessionError | undefined
  const handles = new AppendHandles()
  // Commits and reads of entries take turns, so a read never sees half a commit.
  let queue: Promise<unknown> = Promise.resolve()
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn)
    queue = run.catch(() => {})
    return run
  }

  const parse = async (id: string): Promise<{ lines: ParsedLine[]; buf: Buffer } | undefined> => {
    try {
      const buf = await readFile(pathOf(id))
      const parsed = parseFile(buf)
      if (parsed.skipped) warn(`${sessionFileName(id)}: skipped ${parsed.skipped} malformed line(s)`)
      return { lines: parsed.unterminated ? [...parsed.lines, parsed.unterminated] : parsed.lines, buf }
    } catch (e) {
      if (ENOENT(e)) return undefined
      throw e
    }
  }

  const readEntries = async (id: string): Promise<SessionEntry[]> => {
    if (broken) throw broken
    const file = await parse(id)
    return file ? [...replay(file.lines.map((l) => l.record)).entries.values()] : []
  }

  /** Cuts a torn tail (and any record the journal never committed) and says where the file ends. */
  const repair = async (id: string): Promise<FileState | undefined> => {
    const file = await parse(id)
    if (!file) return undefined
    const path = pathOf(id)
    const first = file.lines.findIndex((l) => (l.record.tx ?? 0) > journal.tx)
    const kept = first < 0 ? file.lines : file.lines.slice(0, first)
    let end = kept.length ? kept[kept.length - 1].end : 0
    if (end < file.buf.length) {
      warn(`${sessionFileName(id)}: cutting ${file.buf.length - end} bytes of torn or uncommitted records`)
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

  /** Replays one session file into its head; a file without a meta record is moved aside. */
  const load = async (id: string): Promise<void> => {
    const file = await parse(id)
    if (!file) return
    const state = replay(file.lines.map((l) => l.record))
    if (!state.meta) {
      const aside = join(home, 'orphans', sessionFileName(id))
      warn(`${sessionFileName(id)}: no meta record, moved aside to ${aside}`)
      await mkdir(join(home, 'orphans'), { recursive: true })
      await rename(pathOf(id), aside)
      return
    }
    heads.set(id, Object.freeze({ meta: state.meta, leaf: state.leaf, v: 1 }))
  }

  /** Flushes every session file written since the last checkpoint, then shrinks the journal to one snapshot line. */
  const checkpoint = async (): Promise<void> => {
    if (fsync) {
      await Promise.all([...dirty].map(async (path) => (await handles.get(path)).datasync().catch((e: unknown) => (ENOENT(e) ? undefined : Promise.reject(e)))))
      await syncDir(dir)
    }
    await handles.drop(journalPath)
    journalSize = await writeSnapshot(journalPath, journal.tx, journal.side, fsync)
    journal.checkpoint = journal.tx
    journal.redo = []
    dirty.clear()
  }

  const open_ = async (): Promise<SessionHead[]> => {
    await handles.closeAll()
    broken = undefined
    dirty.clear()
    await mkdir(home, { recursive: true })
    journal = await readJournal(journalPath, warn)
    for (const map of journal.side.values()) for (const key of map.keys()) if (typeof key === 'number') autoKey = Math.max(autoKey, key)
    const files = new Map<string, FileState>()
    for (const name of await readdir(dir)) {
      const id = sessionIdOfFile(name)
      const state = id === undefined ? undefined : await repair(id)
      if (state) files.set(id!, state)
    }
    // Redo what the journal committed and the session files may have missed.
    let redone = 0
    for (const line of journal.redo) {
      for (const name of line.deleted ?? []) {
        const id = sessionIdOfFile(name)
        const f = id === undefined ? undefined : files.get(id)
        if (f && f.lastTx < line.tx) {
          await unlink(pathOf(id!))
          files.delete(id!)
          redone++
        }
      }
      for (const [name, text] of line.writes ?? []) {
        const id = sessionIdOfFile(name)
        if (id === undefined) continue
        const f = files.get(id) ?? { end: 0, lastTx: 0, lastTxStart: 0 }
        if (f.lastTx > line.tx) continue
        // The last transaction of a file may have been cut short: write it again whole.
        if (f.lastTx === line.tx) {
          if (f.end === f.lastTxStart + Buffer.byteLength(text)) continue
          await truncate(pathOf(id), f.lastTxStart)
          f.end = f.lastTxStart
        }
        const fh = await open(pathOf(id), 'a')
        await fh.write(text).finally(() => fh.close())
        files.set(id, { end: f.end + Buffer.byteLength(text), lastTx: line.tx, lastTxStart: f.end })
        dirty.add(pathOf(id))
        redone++
      }
    }
    if (redone) warn(`journal: redid ${redone} session file write(s) a crash had cut short`)
    heads.clear()
    for (const id of files.keys()) await load(id)
    journalSize = (await stat(journalPath).catch(() => ({ size: 0 }))).size
    if (redone || journal.redo.length > 1000 || journalSize > checkpointBytes) await checkpoint()
    return [...heads.values()]
  }

  const commit = async (ws: WriteSet): Promise<void> => {
    if (broken) throw broken
    if (!ws.deleted.size && !ws.heads.size && !ws.entries.size && !ws.side.length) return
    const tx = journal.tx + 1
    const deleted = [...ws.deleted].filter((id) => heads.has(id)).map(sessionFileName)
    const writes: Array<[string, string]> = []
    for (const id of new Set([...ws.heads.keys(), ...ws.entries.keys()])) {
      const prev = ws.deleted.has(id) ? undefined : heads.get(id)
      const text = commitLines(prev, ws.heads.get(id), [...(ws.entries.get(id)?.values() ?? [])], tx)
      if (text) writes.push([sessionFileName(id), text])
    }
    const side: SideWrite[] = ws.side.map((w) => (w.key === undefined ? { ...w, key: ++autoKey } : w))
    await options.beforeCommitPoint?.(tx)
    const line = journalLine({ tx, side, ...(deleted.length && { deleted }), ...(writes.length && { writes }) })
    const before = journalSize
    try {
      const fh = await handles.get(journalPath)
      await fh.write(line)
      if (fsync) await fh.datasync()
    } catch (e) {
      await handles.drop(journalPath)
      await truncate(journalPath, before).catch((err: unknown) => warn(`journal: could not cut a failed commit: ${String(err)}`))
      throw e
    }
    // The commit stands from here: memory follows it, the session files are written next.
    journalSize += Buffer.byteLength(line)
    journal.tx = tx
    applySide(journal.side, side)
    for (const id of ws.deleted) heads.delete(id)
    for (const [id, head] of ws.heads) heads.set(id, head)
    await options.afterCommitPoint?.(tx)
    try {
      for (const name of deleted) {
        const path = join(dir, name)
        dirty.delete(path)
        await handles.drop(path)
        await unlink(path).catch((e: unknown) => (ENOENT(e) ? undefined : Promise.reject(e)))
      }
      for (const [name, text] of writes) {
        const path = join(dir, name)
        writeAll((await handles.get(path)).fd, text)
        dirty.add(path)
      }
    } catch (e) {
      // The commit stands (the journal has it); the files are redone when the storage reopens.
      broken = new SessionError('session/storage', `session files could not be written after commit ${tx} (${String(e)}); reopen the storage to redo them from the journal`)
      warn(broken.message)
      return
    }
    if (journalSize > checkpointBytes) await checkpoint()
  }

  return withAttachmentFiles(dir, {
    name: `file:${dir}`,
    dir,
    open: () => exclusive(open_),
    entries: (id) => exclusive(() => readEntries(id)),
    transact: (work) =>
      exclusive(async () => {
        if (broken) throw broken
        const reader: StorageReader = { head: async (id) => heads.get(id), entries: readEntries }
        await commit(await work(reader))
      }),
    sideRecords: async (store) => {
      const map = journal.side.get(store)
      if (!map) return []
      return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => ({ key, value }))
    },
    close() {
      void exclusive(() => handles.closeAll())
    },
  }, { fsync })
}
