import { createHash } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { JsonObject, ListOrder, SessionHead } from '@colloquy/core'
import { compareFor, type PageQuery } from '@colloquy/core/host'
import { syncDir } from './journal.js'
import { nextTurn } from '../../work.js'

/**
 * What the index holds per session: its head (meta, leaf, `v`, attachments) and the bytes it
 * stores as quotas count them (`Usage`: the JSON of its meta and current entries, its
 * attachments' sizes).
 */
export interface IndexRecord {
  readonly head: SessionHead
  readonly bytes: number
}

type Key = { k: number; id: string }

/** The tenancy owner a session is counted under (`metadata.owner`, as `Tenancy` reads it). */
const ownerOf = (metadata: JsonObject | undefined): string | null =>
  typeof metadata?.owner === 'string' ? metadata.owner : null

/** Candidates tested between turns of the event loop, when a filter turns many down. */
const SLICE = 2048

/**
 * The file storage's head index: every session's head and stored bytes, by id, with the two
 * sort keys the contract's list orders use kept sorted, and sessions and bytes summed per
 * owner. It lives in memory and on disk as one file (`writeIndexFile`, at each checkpoint of
 * the journal), so opening reads this file and the sessions written since, not every session file.
 */
export class HeadIndex {
  readonly records = new Map<string, IndexRecord>()
  private readonly owners = new Map<string | null, { sessions: number; bytes: number }>()
  private readonly total = { sessions: 0, bytes: 0 }
  /** Ascending (key, id) by `created_at` and by `updated_at`; built on first use, then kept up to date. */
  private sorted: { created?: Key[]; updated?: Key[] } = {}
  /** Bumped by every change, so a page that waited knows to find its place again. */
  private version = 0

  get size(): number {
    return this.records.size
  }

  get(id: string): IndexRecord | undefined {
    return this.records.get(id)
  }

  head(id: string): SessionHead | undefined {
    return this.records.get(id)?.head
  }

  set(id: string, record: IndexRecord): void {
    this.delete(id)
    this.version++
    this.records.set(id, record)
    this.count(record, +1)
    const { created, updated } = this.sorted
    if (created) insert(created, { k: record.head.meta.created_at, id })
    if (updated) insert(updated, { k: record.head.meta.updated_at, id })
  }

  delete(id: string): void {
    const old = this.records.get(id)
    if (!old) return
    this.version++
    this.records.delete(id)
    this.count(old, -1)
    const { created, updated } = this.sorted
    if (created) remove(created, { k: old.head.meta.created_at, id })
    if (updated) remove(updated, { k: old.head.meta.updated_at, id })
  }

  clear(): void {
    this.records.clear()
    this.owners.clear()
    this.total.sessions = this.total.bytes = 0
    this.sorted = {}
    this.version++
  }

  /** Sessions and bytes `owner` holds (`null`: every session). */
  usageOf(owner: string | null): { sessions: number; bytes: number } {
    const o = owner === null ? this.total : this.owners.get(owner)
    return { sessions: o?.sessions ?? 0, bytes: o?.bytes ?? 0 }
  }

  private count(record: IndexRecord, sign: 1 | -1): void {
    const owner = ownerOf(record.head.meta.metadata)
    let o = this.owners.get(owner)
    if (!o) this.owners.set(owner, (o = { sessions: 0, bytes: 0 }))
    o.sessions += sign
    o.bytes += sign * record.bytes
    if (o.sessions === 0) this.owners.delete(owner)
    this.total.sessions += sign
    this.total.bytes += sign * record.bytes
  }

  private keys(order: ListOrder): Key[] {
    const field = order === 'updated_desc' ? 'updated' : 'created'
    let keys = this.sorted[field]
    if (!keys) {
      keys = [...this.records.values()].map((r) => ({
        k: field === 'updated' ? r.head.meta.updated_at : r.head.meta.created_at,
        id: r.head.meta.session_id,
      }))
      keys.sort(ascending)
      this.sorted[field] = keys
    }
    return keys
  }

  /** The core's `PagedReads.page`: a keyset page in one of the contract's orders, ties by id as the store breaks them. */
  async page(q: PageQuery): Promise<SessionHead[]> {
    const asc = q.order === 'created_asc'
    // Both desc orders walk the ascending keys backwards (`compareFor` reverses the whole tuple).
    const from = (keys: readonly Key[], after: Key | undefined): number =>
      asc ? (after ? firstAfter(keys, after) : 0) : after ? firstAfter(keys, after, true) : keys.length - 1
    let keys = this.keys(q.order)
    let i = from(keys, q.after)
    const out: SessionHead[] = []
    let visited = 0
    for (; asc ? i < keys.length : i >= 0; asc ? i++ : i--) {
      const head = this.records.get(keys[i].id)?.head
      if (
        head &&
        (q.status == null || head.meta.status === q.status) &&
        (q.kinds == null || q.kinds.includes(head.meta.kind)) &&
        (!q.accept || q.accept(head.meta))
      ) {
        out.push(head)
        if (out.length >= q.limit) break
      }
      if (++visited % SLICE === 0) {
        // Every key walked counts, whichever filter (status, kind, metadata) turned it down: a
        // slice at a time. Commits may move keys meanwhile, so the walk goes on from its last
        // position, found again.
        const at = keys[i]
        const version = this.version
        await nextTurn()
        if (this.version !== version) {
          keys = this.keys(q.order)
          i = from(keys, at) + (asc ? -1 : 1)
        }
      }
    }
    return out
  }
}

const ascending = compareFor('created_asc')

/** The index of the first key after `after` ascending, or (`backwards`) of the last key before it. */
function firstAfter(keys: readonly Key[], after: Key, backwards = false): number {
  let lo = 0
  let hi = keys.length
  // First index whose key is > after (ascending).
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ascending(keys[mid], after) <= 0) lo = mid + 1
    else hi = mid
  }
  if (!backwards) return lo
  // Last index whose key is < after.
  let j = lo - 1
  while (j >= 0 && ascending(keys[j], after) >= 0) j--
  return j
}

function insert(keys: Key[], key: Key): void {
  keys.splice(firstAfter(keys, key), 0, key)
}

function remove(keys: Key[], key: Key): void {
  const i = firstAfter(keys, key) - 1
  if (i >= 0 && keys[i].id === key.id && keys[i].k === key.k) keys.splice(i, 1)
}

// The index file: a header line, one line per session, and a last line holding the SHA-256 of
// everything before it. It is replaced whole (tmp, flush, rename, flush the directory), so it
// is either the last complete one or the one before; a file that fails its checksum or its
// shape is no index (the storage then rebuilds it from the session files).

const FORMAT = 'colloquy-heads'

interface Header {
  format: typeof FORMAT
  v: 1
  /** The journal's transaction this index is complete up to. */
  tx: number
  n: number
}

/**
 * Writes `records` as the index at `tx`, each with its session's file name (`fileOf`: what
 * opening compares with the directory's listing); `built` is told each line's length (see `slicer`).
 */
export async function writeIndexFile(
  path: string,
  tx: number,
  records: ReadonlyMap<string, IndexRecord>,
  fileOf: (id: string) => string,
  fsync: boolean,
  built: (chars: number) => Promise<void>,
): Promise<void> {
  const header: Header = { format: FORMAT, v: 1, tx, n: records.size }
  const parts: string[] = [JSON.stringify(header) + '\n']
  for (const [id, r] of records) {
    const line = JSON.stringify([id, r.head, r.bytes, fileOf(id)]) + '\n'
    parts.push(line)
    await built(line.length)
  }
  const body = Buffer.from(parts.join(''))
  const sum = createHash('sha256').update(body).digest('hex')
  const tmp = `${path}.tmp`
  await writeFile(tmp, Buffer.concat([body, Buffer.from(JSON.stringify({ sha256: sum }) + '\n')]), {
    flush: fsync,
  })
  await rename(tmp, path)
  if (fsync) await syncDir(dirname(path))
}

/**
 * Reads the index file: its records and the transaction it is complete up to, or the reason it
 * cannot serve (absent, damaged), never a throw.
 */
export async function readIndexFile(
  path: string,
): Promise<
  { tx: number; records: Array<[string, IndexRecord]>; files: Map<string, string> } | { missing: string }
> {
  let buf: Buffer
  try {
    buf = await readFile(path)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return { missing: code === 'ENOENT' ? 'absent' : `it cannot be read (${code ?? String(e)})` }
  }
  const end = buf.lastIndexOf(10, buf.length - 2)
  if (end < 0 || buf[buf.length - 1] !== 10) return { missing: 'cut short' }
  try {
    const trailer = JSON.parse(buf.toString('utf8', end + 1)) as { sha256?: unknown }
    const body = buf.subarray(0, end + 1)
    if (trailer.sha256 !== createHash('sha256').update(body).digest('hex'))
      return { missing: 'its checksum does not match' }
    const text = body.toString('utf8')
    let at = text.indexOf('\n')
    const header = JSON.parse(text.slice(0, at)) as Partial<Header>
    if (header.format !== FORMAT || header.v !== 1 || !Number.isSafeInteger(header.tx))
      return { missing: 'not an index this version writes' }
    const records: Array<[string, IndexRecord]> = []
    const files = new Map<string, string>()
    while (at + 1 < text.length) {
      const next = text.indexOf('\n', at + 1)
      const [id, head, bytes, file] = JSON.parse(text.slice(at + 1, next)) as [
        string,
        SessionHead,
        number,
        string,
      ]
      // The checksum says these are the lines this storage wrote; the shape is checked anyway.
      if (
        typeof id !== 'string' ||
        head?.meta?.session_id !== id ||
        typeof head.meta.created_at !== 'number' ||
        typeof head.meta.updated_at !== 'number' ||
        typeof bytes !== 'number' ||
        typeof file !== 'string'
      )
        return { missing: 'a record of it is malformed' }
      records.push([id, { head: freeze(head), bytes }])
      files.set(file, id)
      at = next
    }
    if (records.length !== header.n) return { missing: 'it holds fewer records than it says' }
    return { tx: header.tx!, records, files }
  } catch (e) {
    return { missing: `it cannot be parsed (${e instanceof Error ? e.message.slice(0, 120) : String(e)})` }
  }
}

const freeze = (head: SessionHead): SessionHead =>
  Object.freeze({
    meta: Object.freeze(head.meta),
    leaf: head.leaf ?? null,
    v: head.v,
    ...(head.attachments?.length && {
      attachments: Object.freeze(head.attachments.map((a) => Object.freeze(a))),
    }),
  })
