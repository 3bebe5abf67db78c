import type { SearchRole } from '../validation/search-request.js'
import type { WorkMeter } from '../ops/work.js'
import { termList } from './tokenize.js'

/**
 * One searchable thing as the index holds it: a message entry, a session's title (`eid` null), or
 * a custom entry kept only for its parent link (`role` null, no terms), which the active path
 * walks through. Its terms live in the index's own arrays under `id`, not on the object: a
 * hundred thousand messages hold millions of postings, and an object or a string per posting is
 * what made the index ten times the size of its text.
 */
export interface Doc {
  /** The index's number for it (never reused; renumbered only by a compaction). */
  id: number
  readonly sid: string
  readonly eid: string | null
  readonly role: SearchRole | null
  /** The message's timestamp (a title's: the session's `updated_at`). */
  readonly ts: number
  readonly parent: string | null
  /** The entry's revision when it was indexed (a title's: -1): an unchanged entry is not read again. */
  readonly rev: number
  /** Terms counted (BM25's document length). */
  readonly len: number
  /** The block of its session it is persisted in (`doc-block.ts`; -1 for a title, kept with its session). */
  block: number
}

/**
 * A document as it is built and persisted (index format 2): its distinct terms written one after
 * another in one string, and for each in order its length in that string then how often it
 * occurs (capped at `MAX_TF`). One string and one typed array, not an array of strings: cloning a
 * document into IndexedDB and back copies two values, not one per term (format 1's arrays were
 * most of a first pass's time on the page's thread).
 */
export interface DocTerms extends Omit<Doc, 'id' | 'block'> {
  readonly terms: string
  readonly sizes: Uint16Array
}

/** What the index holds of one session, and the store's state it reflects. */
export interface SessionDocs {
  /** The session's head as indexed (`markOf`): when the store's differs, the session is read again. */
  mark: string
  title: Doc | null
  readonly docs: Map<string, Doc>
  /** Documents per block, by block number (`placeDoc` picks a new document's). */
  readonly blocks: number[]
}

/** One term's documents: ids ascending (`ids[0..n)`), each with its term frequency. */
export interface Postings {
  ids: Uint32Array
  tfs: Uint16Array
  /** Slots used, removed documents included until the list is compacted. */
  n: number
  /** Documents still held (the term's document frequency). */
  df: number
}

// BM25's usual constants: term frequency saturates (k1), long messages are damped half-way (b).
const K1 = 1.2
const B = 0.75
/** Terms looked at to expand one prefix, and how many of them (the most frequent) it keeps. */
export const PREFIX_SCAN = 20_000
export const PREFIX_KEEP = 64
/** A term's frequency past this counts as this (BM25 has long saturated: the weight moves by < 1e-4). */
export const MAX_TF = 0xffff

/** Postings waiting to go in their lists (`settle`) past which they go in. */
const PENDING = 1 << 16
/**
 * Slots of one chunk of the pool of documents' term numbers. The pool grows a chunk at a time,
 * never copied whole: a single array grown by half held, at the moment it grew, its old and its
 * new copy (a 100,000-message first pass: 12 MB and 18 MB), and a third of it spare after.
 */
const CHUNK = 1 << 16
/** Term numbers a chunk of 16-bit slots holds (the rest need 32-bit ones). */
const NARROW = 0xffff
/** A chunk of the pool: 16-bit slots while every term number fits (most vocabularies), else 32-bit. */
type Chunk = Uint16Array | Uint32Array
// Arrays grow by half (not double): on average a sixth of their room is spare, not a third.
const more = (n: number): number => n + (n >> 1) + 2
const grow32 = (a: Uint32Array, need: number): Uint32Array => {
  if (need <= a.length) return a
  const b = new Uint32Array(Math.max(need, more(a.length)))
  b.set(a)
  return b
}
const grow16 = (a: Uint16Array, need: number): Uint16Array => {
  if (need <= a.length) return a
  const b = new Uint16Array(Math.max(need, more(a.length)))
  b.set(a)
  return b
}

/**
 * Terms, postings and documents in memory; the reconciler keeps it equal to the store. Terms are
 * interned to numbers; a term's postings are two typed arrays (ids ascending, as ids are handed
 * out in order); a document's term numbers sit in a pool grown a chunk at a time. A removed document leaves a
 * tombstone (its slot in `docs` empty) that queries skip; a term's list is compacted when half of
 * it is tombstones, and the whole index renumbered when half the ids ever handed out are dead.
 */
export class InvertedIndex {
  readonly sessions = new Map<string, SessionDocs>()
  private readonly termIds = new Map<string, number>()
  private readonly termOf: string[] = []
  private readonly lists: (Postings | undefined)[] = []
  /**
   * By document id: the document (undefined once removed), its length, and where its term
   * numbers are in the pool (`count` of them from `at` in the chunk `box`).
   */
  private docs: (Doc | undefined)[] = []
  private lens: Uint32Array = new Uint32Array(1024)
  private box: Uint32Array = new Uint32Array(1024)
  private at: Uint32Array = new Uint32Array(1024)
  private count: Uint32Array = new Uint32Array(1024)
  private chunks: Chunk[] = []
  /** Slots used in the last chunk. */
  private tail = 0
  /** Pool slots handed out (a chunk's unused end counted as used once the next chunk begins). */
  private poolUsed = 0
  /** Pool slots of documents still held (the rest of `poolUsed` is holes). */
  private poolLive = 0
  /** A document's term numbers while it is added. */
  private termBuf: Uint32Array = new Uint32Array(1024)
  private live = 0
  /** Sorted vocabulary for prefixes; new terms wait in `fresh` until a prefix query merges them. */
  private vocab: string[] = []
  private fresh: string[] = []
  private docCount = 0
  private totalLen = 0
  /**
   * Postings added but not yet in their lists: term, document, frequency, in the order added
   * (so ids ascend). They go in (`settle`) once this fills, or before anything reads or removes:
   * each list then grows once per batch, not once per posting (growing a typed array per posting
   * was most of `add`'s time in a first pass).
   */
  private pendTerm: Uint32Array = new Uint32Array(1024)
  private pendDoc: Uint32Array = new Uint32Array(1024)
  private pendTf: Uint16Array = new Uint16Array(1024)
  private pendN = 0
  /** Per term, its postings in the batch being settled (zero between batches). */
  private scratch: Uint32Array = new Uint32Array(1024)

  get size(): number {
    return this.docCount
  }

  /** Ids handed out so far (a bound for arrays indexed by document id). */
  get idBound(): number {
    return this.docs.length
  }

  doc(id: number): Doc | undefined {
    return this.docs[id]
  }

  postings(term: string): Postings | undefined {
    this.settle()
    const t = this.termIds.get(term)
    const list = t === undefined ? undefined : this.lists[t]
    return list && list.df > 0 ? list : undefined
  }

  /** Adds a built document; returns what the index keeps of it. */
  add(built: DocTerms): Doc {
    const { terms, sizes } = built
    const n = sizes.length >> 1
    // Compactions first, before the document has an id (a compaction renumbers every document).
    if (this.docs.length >= this.live * 2 + 4096 || this.wantsCompaction(n)) {
      this.settle()
      this.compact()
    }
    const id = this.docs.length
    // Written out (not spread): the object keeps its fields inline, without a property array.
    const doc: Doc = {
      id,
      sid: built.sid,
      eid: built.eid,
      role: built.role,
      ts: built.ts,
      parent: built.parent,
      rev: built.rev,
      len: built.len,
      block: -1,
    }
    this.docs.push(doc)
    this.live++
    if (id >= this.lens.length) {
      this.lens = grow32(this.lens, id + 1)
      this.box = grow32(this.box, id + 1)
      this.at = grow32(this.at, id + 1)
      this.count = grow32(this.count, id + 1)
    }
    this.lens[id] = doc.len
    if (this.pendN + n > PENDING) this.settle()
    if (this.pendN + n > this.pendTerm.length) {
      this.pendTerm = grow32(this.pendTerm, this.pendN + n)
      this.pendDoc = grow32(this.pendDoc, this.pendN + n)
      this.pendTf = grow16(this.pendTf, this.pendN + n)
    }
    if (n > this.termBuf.length) this.termBuf = new Uint32Array(more(n))
    const own = this.termBuf
    let widest = 0
    for (let i = 0, off = 0; i < n; i++) {
      const term = terms.slice(off, (off += sizes[2 * i]))
      let t = this.termIds.get(term)
      if (t === undefined) {
        t = this.termOf.length
        // A copy of its own: the slice would keep the whole string it was cut from (a document's
        // terms, a block's) alive as long as the term is in the vocabulary.
        const copy = (' ' + term).slice(1)
        this.termIds.set(copy, t)
        this.termOf.push(copy)
        this.lists.push(undefined)
      }
      own[i] = t
      if (t > widest) widest = t
      this.pendTerm[this.pendN] = t
      this.pendDoc[this.pendN] = id
      this.pendTf[this.pendN++] = sizes[2 * i + 1]
    }
    this.place(id, n, widest)
    this.chunks[this.box[id]].set(own.subarray(0, n), this.at[id])
    this.poolLive += n
    if (doc.role !== null) {
      this.docCount++
      this.totalLen += doc.len
    }
    return doc
  }

  /** Whether adding `n` term numbers starts a chunk while half the pool is holes. */
  private wantsCompaction(n: number): boolean {
    const last = this.chunks[this.chunks.length - 1]
    const fits = last !== undefined && this.tail + n <= last.length
    return !fits && this.poolUsed - this.poolLive > Math.max(this.poolLive, CHUNK)
  }

  /** Finds room for document `id`'s `n` term numbers, the largest `widest` (sets its `box` and `at`). */
  private place(id: number, n: number, widest: number): void {
    let c = this.chunks.length - 1
    const last = this.chunks[c]
    if (
      last === undefined ||
      this.tail + n > last.length ||
      (widest > NARROW && last instanceof Uint16Array)
    ) {
      if (last !== undefined) this.poolUsed += last.length - this.tail
      const size = Math.max(CHUNK, n)
      this.chunks.push(
        widest > NARROW || this.termOf.length > NARROW ? new Uint32Array(size) : new Uint16Array(size),
      )
      c++
      this.tail = 0
    }
    this.box[id] = c
    this.at[id] = this.tail
    this.count[id] = n
    this.tail += n
    this.poolUsed += n
  }

  /** Document `id`'s term numbers (a view into its chunk). */
  private termsOf(id: number): Chunk {
    const at = this.at[id]
    return this.chunks[this.box[id]].subarray(at, at + this.count[id])
  }

  remove(doc: Doc): void {
    const id = doc.id
    if (this.docs[id] !== doc) return
    this.settle()
    this.docs[id] = undefined
    this.live--
    this.poolLive -= this.count[id]
    const own = this.termsOf(id)
    for (let i = 0; i < own.length; i++) {
      const list = this.lists[own[i]]!
      list.df--
      if (list.df * 2 < list.n) this.compactList(list)
    }
    if (doc.role !== null) {
      this.docCount--
      this.totalLen -= doc.len
    }
  }

  removeSession(sid: string): void {
    const s = this.sessions.get(sid)
    if (!s) return
    for (const d of s.docs.values()) this.remove(d)
    if (s.title) this.remove(s.title)
    this.sessions.delete(sid)
  }

  /** The document as it is persisted (terms and their frequencies read back from the postings). */
  built(doc: Doc): DocTerms {
    this.settle()
    const { id } = doc
    const meta = {
      sid: doc.sid,
      eid: doc.eid,
      role: doc.role,
      ts: doc.ts,
      parent: doc.parent,
      rev: doc.rev,
      len: doc.len,
    }
    const terms: string[] = []
    const sizes = new Uint16Array(this.count[id] * 2)
    const own = this.termsOf(id)
    for (let i = 0, k = 0; i < own.length; i++, k += 2) {
      const list = this.lists[own[i]]!
      let lo = 0
      let hi = list.n
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (list.ids[mid] < id) lo = mid + 1
        else hi = mid
      }
      const term = this.termOf[own[i]]
      terms.push(term)
      sizes[k] = term.length
      sizes[k + 1] = list.tfs[lo]
    }
    return { ...meta, terms: terms.join(''), sizes }
  }

  /** BM25 weight of one term occurring `tf` times in document `id`, the term being in `df` documents. */
  weight(id: number, tf: number, df: number): number {
    return bm25(tf, df, this.lens[id], this.docCount, this.totalLen)
  }

  /**
   * Gives back the spare room of growing arrays (a sixth on average, a third at worst): after a
   * pass that indexed many documents, such as the first, most lists will not grow again soon.
   */
  trim(): void {
    this.settle()
    for (const list of this.lists) {
      if (!list || list.ids.length <= list.n + (list.n >> 4) + 2) continue
      list.ids = list.ids.slice(0, list.n)
      list.tfs = list.tfs.slice(0, list.n)
    }
    // The last chunk's unused end (the next document starts a chunk of its own).
    const c = this.chunks.length - 1
    if (c >= 0 && this.chunks[c].length - this.tail > 1024) {
      this.chunks[c] = this.chunks[c].slice(0, this.tail)
    }
  }

  /** Puts the pending postings in their lists: each list grown once, to what it receives. */
  private settle(): void {
    const n = this.pendN
    if (!n) return
    this.pendN = 0
    const { pendTerm, pendDoc, pendTf } = this
    if (this.scratch.length < this.termOf.length) this.scratch = new Uint32Array(more(this.termOf.length))
    const scratch = this.scratch
    const touched: number[] = []
    for (let i = 0; i < n; i++) if (scratch[pendTerm[i]]++ === 0) touched.push(pendTerm[i])
    for (const t of touched) {
      let list = this.lists[t]
      if (!list) this.lists[t] = list = { ids: new Uint32Array(0), tfs: new Uint16Array(0), n: 0, df: 0 }
      list.ids = grow32(list.ids, list.n + scratch[t])
      list.tfs = grow16(list.tfs, list.n + scratch[t])
      // A term back in a document after none held it: the vocabulary dropped it, take it again.
      if (list.df === 0) this.fresh.push(this.termOf[t])
      list.df += scratch[t]
      scratch[t] = 0
    }
    for (let i = 0; i < n; i++) {
      const list = this.lists[pendTerm[i]]!
      list.ids[list.n] = pendDoc[i]
      list.tfs[list.n++] = pendTf[i]
    }
  }

  /** Drops a list's tombstones, keeping its order. */
  private compactList(list: Postings): void {
    let w = 0
    for (let r = 0; r < list.n; r++) {
      if (this.docs[list.ids[r]] === undefined) continue
      list.ids[w] = list.ids[r]
      list.tfs[w++] = list.tfs[r]
    }
    list.n = w
    if (list.ids.length > 8 && w * 4 < list.ids.length) {
      list.ids = list.ids.slice(0, w * 2)
      list.tfs = list.tfs.slice(0, w * 2)
    }
  }

  /**
   * Renumbers the live documents 0..live in their order (so every list stays ascending), drops
   * every tombstone and the terms no document holds; the pool is rewritten without its holes.
   */
  private compact(): void {
    const remap = new Int32Array(this.docs.length).fill(-1)
    const docs: Doc[] = []
    for (const d of this.docs) {
      if (!d) continue
      remap[d.id] = docs.length
      docs.push(d)
    }
    const lens = new Uint32Array(Math.max(1024, docs.length * 2))
    const box = new Uint32Array(lens.length)
    const at = new Uint32Array(lens.length)
    const count = new Uint32Array(lens.length)
    const oldChunks = this.chunks
    const oldBox = this.box
    const oldAt = this.at
    const oldCount = this.count
    this.chunks = []
    this.tail = this.poolUsed = this.poolLive = 0
    this.box = box
    this.at = at
    this.count = count
    for (let i = 0; i < docs.length; i++) {
      const old = docs[i].id
      lens[i] = this.lens[old]
      const n = oldCount[old]
      const own = oldChunks[oldBox[old]].subarray(oldAt[old], oldAt[old] + n)
      let widest = 0
      for (let j = 0; j < n; j++) if (own[j] > widest) widest = own[j]
      this.place(i, n, widest)
      this.chunks[box[i]].set(own, at[i])
      this.poolLive += n
      docs[i].id = i
    }
    for (const list of this.lists) {
      if (!list) continue
      let w = 0
      for (let r = 0; r < list.n; r++) {
        const to = remap[list.ids[r]]
        if (to < 0) continue
        list.ids[w] = to
        list.tfs[w++] = list.tfs[r]
      }
      list.n = w
    }
    // Terms without documents are forgotten (their numbers stay free: the lists array keeps its length).
    for (let t = 0; t < this.lists.length; t++) {
      const list = this.lists[t]
      if (list && list.df === 0) {
        this.lists[t] = undefined
        this.termIds.delete(this.termOf[t])
        this.termOf[t] = ''
      }
    }
    this.docs = docs
    this.lens = lens
  }

  /**
   * Terms starting with `prefix`, the most frequent `PREFIX_KEEP` of at most `PREFIX_SCAN` looked
   * at; `truncated` when some were left out.
   */
  prefixTerms(prefix: string, meter: WorkMeter): { terms: Postings[]; truncated: boolean } {
    this.settle()
    this.mergeFresh(meter)
    let lo = 0
    let hi = this.vocab.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.vocab[mid] < prefix) lo = mid + 1
      else hi = mid
    }
    const found: Postings[] = []
    let truncated = false
    for (let i = lo; i < this.vocab.length; i++) {
      const term = this.vocab[i]
      if (!term.startsWith(prefix)) break
      if (i - lo >= PREFIX_SCAN || !meter.take(1)) {
        truncated = true
        break
      }
      const list = this.postings(term)
      if (list) found.push(list)
    }
    if (found.length > PREFIX_KEEP) {
      found.sort((a, b) => b.df - a.df)
      found.length = PREFIX_KEEP
      truncated = true
    }
    return { terms: found, truncated }
  }

  private mergeFresh(meter: WorkMeter): void {
    if (!this.fresh.length) return
    // Paid by the query that needs it: a sort of what is new, one merge pass, dropping the terms
    // no document holds any more (the vocabulary never outgrows the postings for long).
    const add = this.fresh.sort()
    this.fresh = []
    meter.take(Math.min(meter.remaining, this.vocab.length + add.length))
    const out: string[] = []
    let i = 0
    let j = 0
    while (i < this.vocab.length || j < add.length) {
      const t =
        j >= add.length || (i < this.vocab.length && this.vocab[i] < add[j]) ? this.vocab[i++] : add[j++]
      if (out[out.length - 1] !== t && this.postings(t)) out.push(t)
    }
    this.vocab = out
  }
}

/**
 * BM25 weight of a term occurring `tf` times in a document of `len` terms, the term being in `df`
 * of `n` documents holding `totalLen` terms in all. The one formula: the device's index and the
 * server's PostgreSQL full text both score with it, so their scores agree.
 */
export function bm25(tf: number, df: number, len: number, n: number, totalLen: number): number {
  const avg = n ? totalLen / n : 1
  const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
  return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / avg))
}

/** Distinct terms with their counts as a document keeps them (`DocTerms`' `terms` and `sizes`). */
export function packTerms(counts: ReadonlyMap<string, number>): Pick<DocTerms, 'terms' | 'sizes'> {
  return packed([...counts.keys()], [...counts.values()])
}

/** `terms` (distinct) with their counts, packed. */
function packed(terms: readonly string[], tfs: readonly number[]): Pick<DocTerms, 'terms' | 'sizes'> {
  const sizes = new Uint16Array(terms.length * 2)
  // A term is at most `MAX_TERM_CHARS` (a word) or a pair of characters (CJK): its length fits.
  for (let i = 0, k = 0; i < terms.length; i++) {
    sizes[k++] = terms[i].length
    sizes[k++] = Math.min(tfs[i], MAX_TF)
  }
  return { terms: terms.join(''), sizes }
}

/** The terms and counts of a packed document, in order (for a check or a test). */
export function unpackTerms(d: Pick<DocTerms, 'terms' | 'sizes'>): { terms: string[]; tfs: number[] } {
  const terms: string[] = []
  const tfs: number[] = []
  for (let i = 0, off = 0; i < d.sizes.length; i += 2) {
    terms.push(d.terms.slice(off, (off += d.sizes[i])))
    tfs.push(d.sizes[i + 1])
  }
  return { terms, tfs }
}

/** A document of `text` (none for null: a custom entry, kept for its parent link). */
export function docOf(base: Omit<DocTerms, 'terms' | 'sizes' | 'len'>, text: string | null): DocTerms {
  // Counted as runs of the sorted terms, not in a Map per document: measured over a first pass of
  // 100,000 messages, the Maps' tables were kept in the old generation (V8 gave up on them dying
  // young) and were most of the garbage the pass left there, half its peak heap.
  const all = text ? termList(text, []) : []
  all.sort()
  const terms: string[] = []
  const tfs: number[] = []
  for (let i = 0; i < all.length;) {
    let end = i + 1
    while (end < all.length && all[end] === all[i]) end++
    terms.push(all[i])
    tfs.push(end - i)
    i = end
  }
  const { sid, eid, role, ts, parent, rev } = base
  return { sid, eid, role, ts, parent, rev, len: all.length, ...packed(terms, tfs) }
}
