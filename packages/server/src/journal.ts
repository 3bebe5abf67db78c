import { open, readFile, rename, writeFile } from 'node:fs/promises'
import type { SideWrite } from '@colloquy/core'

export type SideStores = Map<string, Map<string | number, unknown>>

/** What the journal says: the last committed transaction and the side stores' records. */
export interface JournalState {
  tx: number
  side: SideStores
  /** Lines read, to decide when the journal is worth compacting. */
  lines: number
}

/**
 * One journal line is one committed transaction: `{"tx":n,"side":[...]}`. Writing it is the
 * commit point: session records tagged with a later `tx` are rolled back on open. A side write
 * without `value` deletes its key. A `snapshot` line (compaction) replaces everything before it.
 */
export function journalLine(tx: number, side: readonly SideWrite[]): string {
  return JSON.stringify({ tx, side }) + '\n'
}

export function applySide(stores: SideStores, writes: readonly SideWrite[]): void {
  for (const w of writes) {
    let map = stores.get(w.store)
    if (!map) stores.set(w.store, (map = new Map()))
    if (w.value === undefined) map.delete(w.key!)
    else map.set(w.key!, w.value)
  }
}

interface Line {
  tx: number
  snapshot?: boolean
  side: SideWrite[]
}

function parseLine(text: string): Line {
  const v = JSON.parse(text) as Partial<Line>
  if (!Number.isSafeInteger(v.tx) || !Array.isArray(v.side)) throw new Error('malformed journal line')
  return v as Line
}

/** Reads the journal and cuts a torn tail (a transaction that never committed). */
export async function readJournal(path: string, warn: (message: string) => void): Promise<JournalState> {
  const state: JournalState = { tx: 0, side: new Map(), lines: 0 }
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
    let line: Line
    try {
      line = parseLine(text)
    } catch {
      warn(`journal: skipping a malformed line before offset ${start}`)
      continue
    }
    if (line.snapshot) state.side = new Map()
    applySide(state.side, line.side)
    state.tx = Math.max(state.tx, line.tx)
    state.lines++
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

/** Rewrites the journal as one snapshot line (tmp + rename), so replay stays short. */
export async function compactJournal(path: string, state: JournalState, fsync: boolean): Promise<void> {
  const side: SideWrite[] = []
  for (const [store, map] of state.side) for (const [key, value] of map) side.push({ store, key, value })
  const tmp = `${path}.tmp`
  await writeFile(tmp, JSON.stringify({ tx: state.tx, snapshot: true, side }) + '\n', { flush: fsync })
  await rename(tmp, path)
  state.lines = 1
}
