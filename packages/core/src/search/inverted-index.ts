import type { SearchRole } from '../validation/search-request.js'
import type { WorkMeter } from '../ops/work.js'

/**
 * One searchable thing: a message entry, a session's title (`eid` null), or a custom entry kept
 * only for its parent link (`role` null, no terms), which the active path walks through.
 */
export interface Doc {
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
  /** Distinct terms and how often each occurs. */
  readonly terms: readonly string[]
  readonly tfs: readonly number[]
}

/** What the index holds of one session, and the store's state it reflects. */
export interface SessionDocs {
  /** The session's head as indexed (`markOf`): when the store's differs, the session is read again. */
  mark: string
  title: Doc | null
  readonly docs: Map<string, Doc>
}

// BM25's usual constants: term frequency saturates (k1), long messages are damped half-way (b).
const K1 = 1.2
const B = 0.75
/** Terms looked at to expand one prefix, and how many of them (the most frequent) it keeps. */
export const PREFIX_SCAN = 20_000
export const PREFIX_KEEP = 64

/** Terms, postings and documents in memory; the reconciler keeps it equal to the store. */
export class InvertedIndex {
  readonly sessions = new Map<string, SessionDocs>()
  readonly postings = new Map<string, Map<Doc, number>>()
  /** Sorted vocabulary for prefixes; new terms wait in `fresh` until a prefix query merges them. */
  private vocab: string[] = []
  private readonly known = new Set<string>()
  private fresh: string[] = []
  private docCount = 0
  private totalLen = 0

  get size(): number {
    return this.docCount
  }

  add(doc: Doc): void {
    for (let i = 0; i < doc.terms.length; i++) {
      const term = doc.terms[i]
      let list = this.postings.get(term)
      if (!list) {
        this.postings.set(term, (list = new Map()))
        if (!this.known.has(term)) {
          this.known.add(term)
          this.fresh.push(term)
        }
      }
      list.set(doc, doc.tfs[i])
    }
    if (doc.role !== null) {
      this.docCount++
      this.totalLen += doc.len
    }
  }

  remove(doc: Doc): void {
    for (const term of doc.terms) {
      const list = this.postings.get(term)
      if (list?.delete(doc) && list.size === 0) this.postings.delete(term)
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

  /** BM25 weight of one term occurring `tf` times in `doc`, the term being in `df` documents. */
  weight(doc: Doc, tf: number, df: number): number {
    const n = this.docCount
    const avg = n ? this.totalLen / n : 1
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
    return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.len) / avg))
  }

  /**
   * Terms starting with `prefix`, the most frequent `PREFIX_KEEP` of at most `PREFIX_SCAN` looked
   * at; `truncated` when some were left out.
   */
  prefixTerms(prefix: string, meter: WorkMeter): { terms: string[]; truncated: boolean } {
    this.mergeFresh(meter)
    let lo = 0
    let hi = this.vocab.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.vocab[mid] < prefix) lo = mid + 1
      else hi = mid
    }
    const found: [string, number][] = []
    let truncated = false
    for (let i = lo; i < this.vocab.length; i++) {
      const term = this.vocab[i]
      if (!term.startsWith(prefix)) break
      if (i - lo >= PREFIX_SCAN || !meter.take(1)) {
        truncated = true
        break
      }
      const df = this.postings.get(term)?.size
      if (df) found.push([term, df])
    }
    if (found.length > PREFIX_KEEP) {
      found.sort((a, b) => b[1] - a[1])
      found.length = PREFIX_KEEP
      truncated = true
    }
    return { terms: found.map((f) => f[0]), truncated }
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
      if (this.postings.has(t) && out[out.length - 1] !== t) out.push(t)
      else if (!this.postings.has(t)) this.known.delete(t)
    }
    this.vocab = out
  }
}

/** A document built from tokens: distinct terms with counts. */
export function docOf(
  base: Omit<Doc, 'terms' | 'tfs' | 'len'>,
  tokens: readonly { readonly term: string }[],
): Doc {
  const counts = new Map<string, number>()
  for (const t of tokens) counts.set(t.term, (counts.get(t.term) ?? 0) + 1)
  return { ...base, len: tokens.length, terms: [...counts.keys()], tfs: [...counts.values()] }
}
