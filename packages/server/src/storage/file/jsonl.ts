import { type SessionEntry, type SessionHead, type SessionMeta } from '@colloquy/core'
import { jsonEqual } from '@colloquy/core/host'
import { parseStoredEntry, parseStoredMeta } from '@colloquy/core/wire'
import { slicer } from '../../work.js'

/**
 * One line of a session file, the seed's fs adapter records. `tx` is this server's addition: the
 * commit a record belongs to. A record whose commit never reached the journal is rolled back on
 * open; records without `tx` (written by the seed) are taken as committed.
 *
 * As read back (`parseFile`), every `meta` and `append` record holds its session's whole meta.
 * On disk, this server writes them with only what changed since the session's meta before
 * (`MetaPatch`): an append changes a meta's count and time alone, and a whole meta (several times
 * larger when sealed) on every append line cost the session file, the journal line and their
 * writes in proportion. Whole metas (the seed's, and this server's earlier files) still read.
 */
export type SessionRecord = (
  | { type: 'meta'; meta: SessionMeta }
  | { type: 'entry'; entry: SessionEntry }
  | { type: 'leaf'; entry_id: string | null }
  | { type: 'append'; entry: SessionEntry; meta: SessionMeta }
  | { type: 'commit'; entry_id: string }
  | { type: 'version' }
) & {
  tx?: number
  /**
   * The session head's `v` after the commit, on the last record each commit writes for a head
   * (a `version` record alone when the commit changed nothing else the file holds, such as an
   * attachment), so a restart serves the very `v` that was committed (see `commitLines`).
   */
  v?: number
}

/**
 * A meta as the fields that changed since the session's previous meta: `set` holds each changed
 * or added top-level field whole, `unset` names the fields removed. Written in place of `meta`
 * whenever the file holds a meta before it; never names `session_id` (a patch cannot move a
 * record to another session).
 */
export interface MetaPatch {
  set?: Record<string, unknown>
  unset?: string[]
}

export interface ParsedLine {
  record: SessionRecord
  /** Byte offset just past this line's newline: where the file can be cut after it. */
  end: number
}

export interface ParsedFile {
  lines: ParsedLine[]
  /** Offset past the last complete line; anything after it is a torn tail. */
  completeEnd: number
  /** A tail without its newline that is nevertheless a whole record (kept, newline added). */
  unterminated?: ParsedLine
  skipped: number
  /**
   * Every session id a meta record names, read before validation: a line the validator skips
   * (a lone-surrogate id an earlier version accepted) still counts, so a file two sessions
   * shared is recognised as such.
   */
  sessionIds: Set<unknown>
}

const rawSessionId = (value: unknown, into: Set<unknown>): void => {
  const r = value as { type?: unknown; meta?: { session_id?: unknown } } | null
  if (r && (r.type === 'meta' || r.type === 'append') && typeof r.meta === 'object' && r.meta !== null)
    into.add(r.meta.session_id)
}

function meta(value: unknown): SessionMeta {
  const m = parseStoredMeta(value, 'meta')
  return m.updated_at === undefined ? { ...m, updated_at: m.created_at } : m
}

/**
 * The whole meta a `meta` or `append` record stands for: its own `meta`, or its patch (`set`,
 * `unset`; an `append` with neither keeps the meta as it was) applied to `base`, the meta the
 * file held before it. Validated whole either way, so a patch can never yield what a whole meta
 * could not be.
 */
function metaOf(r: Record<string, unknown>, base: SessionMeta | undefined): SessionMeta {
  if (r.meta !== undefined) return meta(r.meta)
  const { set, unset } = r
  if (set === undefined && unset === undefined && r.type !== 'append') throw new Error('meta')
  if (!base) throw new Error('a meta patch with no meta before it')
  if (set !== undefined && (typeof set !== 'object' || set === null || Array.isArray(set)))
    throw new Error('set')
  if (unset !== undefined && (!Array.isArray(unset) || !unset.every((k) => typeof k === 'string')))
    throw new Error('unset')
  if (set === undefined && unset === undefined) return base
  if ((set && 'session_id' in set) || (unset as string[] | undefined)?.includes('session_id'))
    throw new Error('a meta patch names session_id')
  // Spread, not `Object.assign`: an own `__proto__` key parsed from JSON stays a plain key.
  const next: Record<string, unknown> = { ...base, ...(set as Record<string, unknown> | undefined) }
  for (const k of (unset as string[] | undefined) ?? []) delete next[k]
  return meta(next)
}

/**
 * Validates one record with the core's parsers (defaults such as `revision: 0`, `kind: user`
 * apply). `base` is the session's meta before this record (see `metaOf`).
 */
export function parseRecord(value: unknown, base?: SessionMeta): SessionRecord {
  if (typeof value !== 'object' || value === null) throw new Error('not an object')
  const r = value as Record<string, unknown>
  const tx: { tx?: number; v?: number } = Number.isSafeInteger(r.tx) ? { tx: r.tx as number } : {}
  if (r.v !== undefined) {
    if (!Number.isSafeInteger(r.v) || (r.v as number) < 0) throw new Error('v')
    tx.v = r.v as number
  }
  switch (r.type) {
    case 'meta':
      return { type: 'meta', meta: metaOf(r, base), ...tx }
    case 'entry':
      return { type: 'entry', entry: parseStoredEntry(r.entry, 'entry'), ...tx }
    case 'leaf':
      if (r.entry_id !== null && typeof r.entry_id !== 'string') throw new Error('leaf.entry_id')
      return { type: 'leaf', entry_id: r.entry_id ?? null, ...tx }
    case 'append':
      return { type: 'append', entry: parseStoredEntry(r.entry, 'entry'), meta: metaOf(r, base), ...tx }
    case 'commit':
      if (typeof r.entry_id !== 'string') throw new Error('commit.entry_id')
      return { type: 'commit', entry_id: r.entry_id, ...tx }
    case 'version':
      if (r.v === undefined) throw new Error('version.v')
      return { type: 'version', ...tx }
    default:
      throw new Error(`unknown record type ${String(r.type)}`)
  }
}

/**
 * Splits a session file into records, each meta patch resolved into the whole meta it stands for
 * (`base`: the session's meta before the buffer's first line, when the buffer continues a file);
 * malformed complete lines are skipped (and counted). A file may be long (thousands of entries,
 * a session evicted from the working set and read again): its lines are parsed and validated a
 * slice at a time (`slicer`), other requests running between slices.
 */
export async function parseFile(
  buf: Buffer,
  built: (chars: number) => Promise<void> = slicer(),
  base?: SessionMeta,
): Promise<ParsedFile> {
  const lines: ParsedLine[] = []
  let start = 0
  let skipped = 0
  const sessionIds = new Set<unknown>()
  let last = base
  for (;;) {
    const nl = buf.indexOf(10, start)
    if (nl < 0) break
    const text = buf.toString('utf8', start, nl).trim()
    if (text) {
      try {
        const value: unknown = JSON.parse(text)
        rawSessionId(value, sessionIds)
        const record = parseRecord(value, last)
        if ('meta' in record) last = record.meta
        lines.push({ record, end: nl + 1 })
      } catch {
        skipped++
      }
    }
    await built(nl + 1 - start)
    start = nl + 1
  }
  const out: ParsedFile = { lines, completeEnd: start, skipped, sessionIds }
  if (start < buf.length) {
    try {
      const value: unknown = JSON.parse(buf.toString('utf8', start))
      out.unterminated = { record: parseRecord(value, last), end: buf.length }
      rawSessionId(value, sessionIds)
    } catch {
      // A torn write: cut on repair.
    }
  }
  return out
}

export interface Replayed {
  meta?: SessionMeta
  leaf: string | null
  entries: Map<string, SessionEntry>
  /** The head's `v` the last commit wrote; undefined in files written before it was kept. */
  v?: number
}

/**
 * Last-wins replay, as the seed does it: last meta, last record per entry id, last leaf. An entry
 * counts only once committed: by an `append` or `commit` record, by this server's `tx` tag, or
 * (the seed's older three-record append) by a `meta` that follows a `leaf`, which commits the
 * active path. An entry a crash left uncommitted is dropped, so a retried append commits it
 * afresh, as the seed would.
 */
export function replay(records: readonly SessionRecord[]): Replayed {
  let meta: SessionMeta | undefined
  let leaf: string | null = null
  const entries = new Map<string, SessionEntry>()
  const committed = new Set<string>()
  const commitPath = (from: string | null): void => {
    for (let id = from; id !== null && !committed.has(id); id = entries.get(id)?.parent_id ?? null)
      committed.add(id)
  }
  let previous: SessionRecord['type'] | undefined
  let v: number | undefined
  for (const r of records) {
    if (r.v !== undefined) v = r.v
    switch (r.type) {
      case 'meta':
        meta = r.meta
        if (previous === 'leaf') commitPath(leaf)
        break
      case 'entry':
        entries.set(r.entry.id, r.entry)
        if (r.tx !== undefined) committed.add(r.entry.id)
        break
      case 'leaf':
        leaf = r.entry_id
        break
      case 'append':
        entries.set(r.entry.id, r.entry)
        committed.add(r.entry.id)
        leaf = r.entry.id
        meta = r.meta
        break
      case 'commit':
        committed.add(r.entry_id)
        break
    }
    previous = r.type
  }
  // Ancestors of committed entries are committed too (a child can only be added under a parent).
  for (const id of [...committed]) commitPath(entries.get(id)?.parent_id ?? null)
  for (const id of [...entries.keys()]) if (!committed.has(id)) entries.delete(id)
  while (leaf !== null && !entries.has(leaf)) leaf = lostParent(records, leaf)
  return { meta, leaf, entries, ...(v !== undefined && { v }) }
}

/** The parent of an entry that was dropped as uncommitted: where its append started from. */
function lostParent(records: readonly SessionRecord[], id: string): string | null {
  let parent: string | null = null
  for (const r of records)
    if ((r.type === 'entry' || r.type === 'append') && r.entry.id === id) parent = r.entry.parent_id
  return parent
}

/**
 * What changed from `prev` to `next`, top-level field by field (undefined counts as absent, as
 * in JSON); undefined when nothing did. Unchanged fields are mostly the very same values (the
 * engine spreads the meta it holds), so most comparisons stop at `===`.
 */
export function metaPatch(prev: SessionMeta, next: SessionMeta): MetaPatch | undefined {
  const p = prev as unknown as Record<string, unknown>
  const n = next as unknown as Record<string, unknown>
  let set: Record<string, unknown> | undefined
  let unset: string[] | undefined
  for (const k in n) {
    const v = n[k]
    if (v !== undefined && v !== p[k] && !jsonEqual(v, p[k])) (set ??= {})[k] = v
  }
  for (const k in p) if (p[k] !== undefined && n[k] === undefined) (unset ??= []).push(k)
  if (!set && !unset) return undefined
  return { ...(set && { set }), ...(unset && { unset }) }
}

/**
 * The lines one commit appends to a session's file. A single new entry that becomes the leaf is
 * the seed's atomic `append` record; anything else is `entry` records (parents first, as the
 * draft holds them), then `leaf` and `meta` when they changed, which is also the seed's older
 * three-record form. `prev` is the head the file holds (undefined: none, a new file or one
 * started again): a meta is written whole when there is none, else as its patch from `prev`'s
 * (`MetaPatch`), and not at all when nothing of it changed. A commit that writes a head ends
 * with its `v` (see `SessionRecord`).
 */
export function commitLines(
  prev: SessionHead | undefined,
  head: SessionHead | undefined,
  entries: readonly SessionEntry[],
  tx: number,
): string {
  // Each record is built with its `tx` (last, as the format has it) rather than spread into a
  // copy: V8 copies a spread on a slow path, and every append writes one record.
  const line = (record: object): string => JSON.stringify(record) + '\n'
  const patch = head && prev && prev.meta !== head.meta ? metaPatch(prev.meta, head.meta) : undefined
  if (head && entries.length === 1 && head.leaf === entries[0].id && prev?.leaf !== head.leaf) {
    if (!prev) return line({ type: 'append', entry: entries[0], meta: head.meta, v: head.v, tx })
    return line({ type: 'append', entry: entries[0], ...patch, v: head.v, tx })
  }
  const records: Array<Record<string, unknown>> = []
  for (const entry of entries) records.push({ type: 'entry', entry })
  if (head && (prev ? prev.leaf !== head.leaf : head.leaf !== null))
    records.push({ type: 'leaf', entry_id: head.leaf })
  if (head && !prev) records.push({ type: 'meta', meta: head.meta })
  else if (patch) records.push({ type: 'meta', ...patch })
  if (head) {
    if (!records.length) records.push({ type: 'version' })
    records[records.length - 1].v = head.v
  }
  let text = ''
  for (const r of records) {
    r.tx = tx
    text += line(r)
  }
  return text
}
