import { open, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { SideWrite } from '@colloquy/core'
import { legacyIdOfFile } from './file-names.js'

export type SideStores = Map<string, Map<string | number, unknown>>

/**
 * One journal line is one committed transaction: the records it appends to session files (by
 * session id), the session files it deletes (by session id), and its side records (the change
 * log). Lines of earlier versions name files instead (no `v`): they are read back as ids. Writing and
 * flushing that line is the commit point; the session files are written after it and redone
 * from the journal after a crash. A `snapshot` line (a checkpoint) stands for everything
 * before it: the side stores as they were, with every session file flushed up to its `tx`.
 */
export interface JournalLine {
  tx: number
  side: SideWrite[]
  deleted?: string[]
  writes?: Array<[session_id: string, text: string]>
  snapshot?: boolean
  /** 2: `deleted` and `writes` hold session ids; absent: file names of the old layout. */
  v?: 2
}

/** What the journal says on open. */
export interface JournalState {
  tx: number
  side: SideStores
  /** The last checkpoint: session files are known to be flushed up to here. */
  checkpoint: number
  /** Transactions after the checkpoint, to redo into session files a crash may have cut short. */
  redo: JournalLine[]
}

export function journalLine(line: JournalLine): string {
  return JSON.stringify(line) + '\n'
}

/** `JSON.stringify(items)`, an item at a time, each item's length told to `built`. */
async function jsonArrayInSlices(
  items: readonly unknown[],
  built: (chars: number) => Promise<void>,
): Promise<string> {
  let text = '['
  for (let i = 0; i < items.length; i++) {
    const item = JSON.stringify(items[i])
    text += i === 0 ? item : `,${item}`
    await built(item.length)
  }
  return `${text}]`
}

/**
 * The same text as `journalLine`, built a session's writes at a time, each told to `built`
 * (which lets other requests run between slices of a large commit). `writes` must be the line's
 * last key, as `journalLine`'s callers give it.
 */
export async function journalLineInSlices(
  line: JournalLine,
  built: (chars: number) => Promise<void>,
): Promise<string> {
  const { writes, ...rest } = line
  if (!writes?.length) return journalLine(line)
  return `${JSON.stringify(rest).slice(0, -1)},"writes":${await jsonArrayInSlices(writes, built)}}\n`
}

export function applySide(stores: SideStores, writes: readonly SideWrite[]): void {
  for (const w of writes) {
    let map = stores.get(w.store)
    if (!map) stores.set(w.store, (map = new Map()))
    if (w.value === undefined) map.delete(w.key!)
    else map.set(w.key!, w.value)
  }
}

/**
 * Checks a line's shape (a line that cannot be redone is skipped, never thrown on: the server
 * must always start) and turns old-layout file names into ids; names that decode to no id are
 * dropped with a warning.
 */
function parseLine(text: string, warn: (message: string) => void): JournalLine {
  const v = JSON.parse(text) as Partial<JournalLine>
  if (!Number.isSafeInteger(v.tx) || !Array.isArray(v.side)) throw new Error('malformed journal line')
  if (!v.side.every((w) => typeof w === 'object' && w !== null && typeof w.store === 'string'))
    throw new Error('malformed side records')
  const idOf = (name: unknown): string | undefined => {
    const id = typeof name !== 'string' ? undefined : v.v === 2 ? name : legacyIdOfFile(name)
    if (id === undefined)
      warn(
        `journal: tx ${v.tx} names a session file that is no session id (${JSON.stringify(name)?.slice(0, 80)}); skipped`,
      )
    return id
  }
  const deleted = Array.isArray(v.deleted) ? v.deleted.flatMap((n) => idOf(n) ?? []) : undefined
  const writes = Array.isArray(v.writes)
    ? v.writes.flatMap((w): Array<[string, string]> => {
        const id =
          Array.isArray(w) && typeof w[1] === 'string'
            ? idOf(w[0])
            : (warn(`journal: tx ${v.tx} holds a malformed write; skipped`), undefined)
        return id === undefined ? [] : [[id, w[1]]]
      })
    : undefined
  return {
    tx: v.tx!,
    side: v.side,
    v: 2,
    ...(v.snapshot && { snapshot: true }),
    ...(deleted && { deleted }),
    ...(writes && { writes }),
  }
}

/** Reads the journal and cuts a torn tail (a transaction that never committed). */
export async function readJournal(path: string, warn: (message: string) => void): Promise<JournalState> {
  const state: JournalState = { tx: 0, side: new Map(), checkpoint: 0, redo: [] }
  let buf: Buffer
  try {
    buf = await readFile(path)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return state
    throw e
  }
  let start = 0
  for (;;) {
    const nl = buf.indexOf(10, start)
    if (nl < 0) break
    const text = buf.toString('utf8', start, nl)
    start = nl + 1
    if (!text.trim()) continue
    let line: JournalLine
    try {
      line = parseLine(text, warn)
    } catch {
      warn(`journal: skipping a malformed line before offset ${start}`)
      continue
    }
    if (line.snapshot) {
      state.side = new Map()
      state.checkpoint = line.tx
      state.redo = []
    } else state.redo.push(line)
    applySide(state.side, line.side)
    state.tx = Math.max(state.tx, line.tx)
  }
  if (start < buf.length) {
    warn(`journal: cutting a torn last line (${buf.length - start} bytes)`)
    const fh = await open(path, 'r+')
    try {
      await fh.truncate(start)
      await fh.sync()
    } finally {
      await fh.close()
    }
  }
  return state
}

/**
 * Rewrites the journal as one snapshot line at `tx` (tmp, flush, rename, flush the directory).
 * The caller has flushed every session file first: the snapshot is a checkpoint. `kept` are
 * writes a session file could not take yet (a failing session): they stay after the snapshot,
 * to be redone on open as any other line. `built` is told each record's length as it is
 * encoded (see `slicer`).
 */
export async function writeSnapshot(
  path: string,
  tx: number,
  stores: SideStores,
  fsync: boolean,
  kept: readonly JournalLine[] = [],
  built: (chars: number) => Promise<void> = async () => {},
): Promise<number> {
  const side: SideWrite[] = []
  for (const [store, map] of stores) for (const [key, value] of map) side.push({ store, key, value })
  // `journalLine({ tx, side, snapshot: true, v: 2 })`, the side records (the whole change log)
  // encoded a slice at a time: the caller holds the storage's lock, nothing changes them meanwhile.
  const text =
    `{"tx":${JSON.stringify(tx)},"side":${await jsonArrayInSlices(side, built)},"snapshot":true,"v":2}\n` +
    kept.map(journalLine).join('')
  const tmp = `${path}.tmp`
  await writeFile(tmp, text, { flush: fsync })
  await rename(tmp, path)
  if (fsync) await syncDir(dirname(path))
  return Buffer.byteLength(text)
}

export async function syncDir(path: string): Promise<void> {
  const fh = await open(path, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}
