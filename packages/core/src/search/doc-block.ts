import type { SearchRole } from '../validation/search-request.js'
import type { DocTerms, SessionDocs } from './inverted-index.js'

/**
 * Documents of one session per block (index format 3). A first pass of 100,000 messages put one
 * record per document: the requests (a clone and a B-tree insert each) were a third of its time,
 * and a message appended to a long session cost a request of its own. A block holds up to this
 * many, so a session of a hundred messages is one record, and an append rewrites only the last
 * block (at most this many documents), never its whole session.
 */
export const BLOCK_DOCS = 128

/**
 * A block as persisted: its documents' fields in columns, their terms in one string and one typed
 * array (the documents' `terms` and `sizes` one after another, `counts[i]` terms for the i-th).
 * A handful of values to clone, whatever the number of documents.
 */
export interface DocBlock {
  readonly sid: string
  /** The block's number in its session (`[sid, n]` is its key). */
  readonly n: number
  readonly eids: string[]
  readonly roles: (SearchRole | null)[]
  readonly parents: (string | null)[]
  readonly ts: Float64Array
  readonly revs: Float64Array
  readonly lens: Uint32Array
  readonly counts: Uint32Array
  readonly terms: string
  readonly sizes: Uint16Array
}

/** The block `n` of session `sid` holding `docs` (documents of that session, none a title). */
export function packBlock(sid: string, n: number, docs: readonly DocTerms[]): DocBlock {
  const k = docs.length
  const ts = new Float64Array(k)
  const revs = new Float64Array(k)
  const lens = new Uint32Array(k)
  const counts = new Uint32Array(k)
  let size = 0
  for (const d of docs) size += d.sizes.length
  const sizes = new Uint16Array(size)
  size = 0
  for (let i = 0; i < k; i++) {
    const d = docs[i]
    ts[i] = d.ts
    revs[i] = d.rev
    lens[i] = d.len
    counts[i] = d.sizes.length >> 1
    sizes.set(d.sizes, size)
    size += d.sizes.length
  }
  return {
    sid,
    n,
    eids: docs.map((d) => d.eid!),
    roles: docs.map((d) => d.role),
    parents: docs.map((d) => d.parent),
    ts,
    revs,
    lens,
    counts,
    terms: docs.map((d) => d.terms).join(''),
    sizes,
  }
}

/** The documents of a block, in order (each a view on the block's arrays, not a copy). */
export function unpackBlock(b: DocBlock): DocTerms[] {
  const out: DocTerms[] = []
  for (let i = 0, at = 0, chars = 0; i < b.eids.length; i++) {
    const end = at + b.counts[i] * 2
    const sizes = b.sizes.subarray(at, end)
    let len = 0
    for (let j = 0; j < sizes.length; j += 2) len += sizes[j]
    out.push({
      sid: b.sid,
      eid: b.eids[i],
      role: b.roles[i],
      ts: b.ts[i],
      parent: b.parents[i],
      rev: b.revs[i],
      len: b.lens[i],
      terms: b.terms.slice(chars, chars + len),
      sizes,
    })
    at = end
    chars += len
  }
  return out
}

/**
 * The block a new document of `s` goes in: the last one while it holds fewer than `limit`, else a
 * new one. A block emptied by deletes is not filled again (its number stays free): appends, by far
 * the most common change, then only ever rewrite the session's last block.
 */
export function placeDoc(s: SessionDocs, limit = BLOCK_DOCS): number {
  const last = s.blocks.length - 1
  if (last >= 0 && (s.blocks[last] ?? 0) < limit) {
    s.blocks[last] = (s.blocks[last] ?? 0) + 1
    return last
  }
  s.blocks.push(1)
  return last + 1
}
