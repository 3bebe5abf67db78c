import { mkdir, open, readdir, readFile, rename, truncate, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionEntry, SessionHead, SideWrite, Storage, StorageReader, WriteSet } from '@colloquy/core'
import { sessionFileName, sessionIdOfFile } from './file-names.js'
import { applySide, compactJournal, journalLine, readJournal, type JournalState } from './journal.js'
import { commitLines, parseFile, replay, type ParsedLine } from './jsonl.js'

export interface FileStorageOptions {
  /** The data directory: one `<encoded id>.jsonl` per session, bookkeeping in `.colloquy/`. */
  dir: string
  /** Flush session files and the journal to disk before a commit resolves (default true). */
  fsync?: boolean
  warn?: (message: string) => void
  /**
   * Fault injection for crash tests: runs after a commit's session records are written and
   * before its journal line (the commit point).
   */
  beforeCommitPoint?: (tx: number) => void | Promise<void>
  /** The journal is rewritten as one snapshot on open once it has more lines than this (default 10000). */
  compactAfterLines?: number
}

const ENOENT = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT'

/**
 * Seed-compatible file storage. Each session is an append-only JSONL file of `meta` / `entry` /
 * `leaf` / `append` records replayed last-wins. A commit appends its records to every session
 * file it touches, tagged with its transaction number, then appends one line to the journal
 * (`.colloquy/journal.jsonl`) carrying the commit's side records (the change log): that line is
 * the commit point. On open, records of transactions the journal never saw are cut off, a torn
 * last line is repaired, and deletions (files parked in `.colloquy/trash/` until the journal
 * line is written) are finished or undone. So after a crash, session files and change log agree.
 */
export function fileStorage(options: FileStorageOptions): Storage & { readonly dir: string } {
  const dir = options.dir
  const home = join(dir, '.colloquy')
  const trash = join(home, 'trash')
  const journalPath = join(home, 'journal.jsonl')
  const fsync = options.fsync ?? true
  const warn = options.warn ?? ((m: string) => console.warn(`[colloquy fileStorage] ${m}`))
  const pathOf = (id: string): string => join(dir, sessionFileName(id))

  const heads = new Map<string, SessionHead>()
  /** Committed byte length of each session file: where a failed commit cuts it back to. */
  const sizes = new Map<string, number>()
  let journal: JournalState = { tx: 0, side: new Map(), lines: 0 }
  let journalSize = 0
  let autoKey = 0
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
    const file = await parse(id)
    return file ? [...replay(file.lines.map((l) => l.record)).entries.values()] : []
  }

  /** Repairs one session file (uncommitted records, torn tail) and loads its head. */
  const recover = async (id: string): Promise<void> => {
    const file = await parse(id)
    if (!file) return
    const path = pathOf(id)
    const firstUncommitted = file.lines.findIndex((l) => (l.record.tx ?? 0) > journal.tx)
    const kept = firstUncommitted < 0 ? file.lines : file.lines.slice(0, firstUncommitted)
    let end = kept.length ? kept[kept.length - 1].end : 0
    if (end < file.buf.length) {
      warn(`${sessionFileName(id)}: cutting ${file.buf.length - end} bytes of uncommitted or torn records`)
      if (end === 0) {
        await unlink(path)
        return
      }
      await truncate(path, end)
    }
    if (end > 0 && file.buf[end - 1] !== 10) {
      // A whole record that lost only its newline: keep it, finish the line.
      const fh = await open(path, 'a')
      await fh.write('\n').finally(() => fh.close())
      end++
    }
    const state = replay(kept.map((l) => l.record))
    if (!state.meta) {
      warn(`${sessionFileName(id)}: no meta record, moved aside to .colloquy/trash/orphan.${sessionFileName(id)}`)
      await rename(path, join(trash, `orphan.${sessionFileName(id)}`))
      return
    }
    heads.set(id, Object.freeze({ meta: state.meta, leaf: state.leaf, v: 1 }))
    sizes.set(id, end)
  }

  const open_ = async (): Promise<SessionHead[]> => {
    await mkdir(trash, { recursive: true })
    journal = await readJournal(journalPath, warn)
    if (journal.lines > (options.compactAfterLines ?? 10_000)) await compactJournal(journalPath, journal, fsync)
    journalSize = await fileSize(journalPath)
    for (const map of journal.side.values()) for (const key of map.keys()) if (typeof key === 'number') autoKey = Math.max(autoKey, key)
    heads.clear()
    sizes.clear()
    for (const name of await readdir(dir)) {
      const id = sessionIdOfFile(name)
      if (id !== undefined) await recover(id)
    }
    // Deletions park the file in trash until the journal line; finish or undo them now.
    for (const name of await readdir(trash)) {
      const m = /^(\d+)\.(.+)$/.exec(name)
      if (!m) continue
      const id = sessionIdOfFile(m[2])
      if (Number(m[1]) <= journal.tx || id === undefined) await unlink(join(trash, name))
      else {
        warn(`${m[2]}: undoing an uncommitted delete`)
        await rename(join(trash, name), pathOf(id))
        await recover(id)
      }
    }
    return [...heads.values()]
  }

  const commit = async (ws: WriteSet): Promise<void> => {
    if (!ws.deleted.size && !ws.heads.size && !ws.entries.size && !ws.side.length) return
    const tx = journal.tx + 1
    const undo: Array<() => Promise<unknown>> = []
    const parked: string[] = []
    const grown = new Map<string, number>()
    try {
      for (const id of ws.deleted) {
        if (!heads.has(id) && !sizes.has(id)) continue
        const to = join(trash, `${tx}.${sessionFileName(id)}`)
        await rename(pathOf(id), to)
        parked.push(to)
        undo.push(() => rename(to, pathOf(id)))
      }
      const touched = new Set([...ws.heads.keys(), ...ws.entries.keys()])
      await Promise.all(
        [...touched].map(async (id) => {
          const fresh = ws.deleted.has(id) || !sizes.has(id)
          const text = commitLines(fresh ? undefined : heads.get(id), ws.heads.get(id), [...(ws.entries.get(id)?.values() ?? [])], tx)
          if (!text) return
          const before = fresh ? 0 : sizes.get(id)!
          const path = pathOf(id)
          undo.push(() => (before === 0 ? unlink(path) : truncate(path, before)))
          await appendTo(path, text, fsync)
          grown.set(id, before + Buffer.byteLength(text))
        }),
      )
      if (fsync && (parked.length || [...grown.keys()].some((id) => !sizes.has(id) || ws.deleted.has(id)))) await syncDir(dir)
      const side: SideWrite[] = ws.side.map((w) => (w.key === undefined ? { ...w, key: ++autoKey } : w))
      await options.beforeCommitPoint?.(tx)
      const line = journalLine(tx, side)
      const journalBefore = journalSize
      undo.push(() => truncate(journalPath, journalBefore))
      await appendTo(journalPath, line, fsync)
      journalSize += Buffer.byteLength(line)
      journal.tx = tx
      journal.lines++
      applySide(journal.side, side)
    } catch (e) {
      for (const u of undo.reverse()) await u().catch((err: unknown) => warn(`undo after a failed commit: ${String(err)}`))
      throw e
    }
    for (const id of ws.deleted) {
      heads.delete(id)
      sizes.delete(id)
    }
    for (const [id, head] of ws.heads) heads.set(id, head)
    for (const [id, size] of grown) sizes.set(id, size)
    for (const p of parked) await unlink(p).catch(() => {})
  }

  return {
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
      return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => ({ key, value }))
    },
    close() {},
  }
}

async function appendTo(path: string, text: string, fsync: boolean): Promise<void> {
  const fh = await open(path, 'a')
  try {
    await fh.write(text)
    if (fsync) await fh.datasync()
  } finally {
    await fh.close()
  }
}

async function syncDir(path: string): Promise<void> {
  const fh = await open(path, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

async function fileSize(path: string): Promise<number> {
  try {
    const fh = await open(path, 'r')
    try {
      return (await fh.stat()).size
    } finally {
      await fh.close()
    }
  } catch (e) {
    if (ENOENT(e)) return 0
    throw e
  }
}
