import { WorkMeter } from '../ops/work.js'
import { Heap } from '../util/heap.js'
import type { SearchRequest, SearchRole } from '../validation/search-request.js'
import type { Doc, InvertedIndex } from './inverted-index.js'
import type { ParsedQuery } from './parse-query.js'
import { snippetOf, type Snippet } from './snippet.js'
import { tokenize, type Token } from './tokenize.js'

/**
 * What one query may spend (see `WorkMeter`): a unit per posting looked at, per vocabulary term
 * scanned for a prefix, per candidate compared in the sort (log n), per character tokenized for
 * a phrase check or a snippet, per entry walked for the active path. About 10–40 ms on a loaded
 * 2-core machine; a normal query over 100,000 messages spends a fraction of it. Past it the
 * answer is the best among what was looked at, with `incomplete: true`.
 */
export const SEARCH_WORK_BUDGET = 2_000_000

export interface SearchHit {
  readonly session_id: string
  /** The message's entry id; null for a session's title. */
  readonly entry_id: string | null
  readonly role: SearchRole
  /** BM25 relevance (higher is better); equal scores rank the newer first. */
  readonly score: number
  readonly snippet: Snippet
  readonly on_active_path: boolean
  readonly timestamp: number
}

export interface SearchResult {
  readonly hits: readonly SearchHit[]
  /** The work budget ran out (or a prefix matched too many words): better matches may exist. */
  readonly incomplete: boolean
}

/** How a query reads what the index does not hold: texts (for phrases and snippets) and leaves. */
export interface TextSource {
  /** The searchable text of an entry (title when `eid` is null), or undefined when it is gone. */
  text(sid: string, eid: string | null): Promise<string | undefined>
  /** The session's active leaf. */
  leaf(sid: string): string | null | undefined
}

/** One query term's documents, each with its BM25 weight computed on demand. */
interface Match {
  readonly size: number
  docs(): Iterable<Doc>
  weight(doc: Doc): number | undefined
}

function exactMatch(index: InvertedIndex, term: string): Match {
  const list = index.postings.get(term)
  const df = list?.size ?? 0
  return {
    size: df,
    docs: () => list?.keys() ?? [],
    weight: (doc) => {
      const tf = list?.get(doc)
      return tf === undefined ? undefined : index.weight(doc, tf, df)
    },
  }
}

function prefixMatch(
  index: InvertedIndex,
  term: string,
  meter: WorkMeter,
): { match: Match; truncated: boolean } {
  const { terms, truncated } = index.prefixTerms(term, meter)
  // The union of the expansions, each document weighted by the best of the words it holds.
  const best = new Map<Doc, number>()
  let cut = truncated
  outer: for (const t of terms) {
    const list = index.postings.get(t)!
    if (!meter.take(list.size)) {
      cut = true
      break
    }
    for (const [doc, tf] of list) {
      const w = index.weight(doc, tf, list.size)
      const held = best.get(doc)
      if (held === undefined || w > held) best.set(doc, w)
      if (best.size > SEARCH_WORK_BUDGET) break outer
    }
  }
  return { match: { size: best.size, docs: () => best.keys(), weight: (d) => best.get(d) }, truncated: cut }
}

const holdsPhrase = (tokens: readonly Token[], phrase: readonly string[]): boolean => {
  outer: for (let i = 0; i + phrase.length <= tokens.length; i++) {
    for (let k = 0; k < phrase.length; k++) if (tokens[i + k].term !== phrase[k]) continue outer
    return true
  }
  return false
}

/** The best `k` of `all` in order; `all` whole and sorted when it is short. */
function best(all: Candidate[], k: number, order: (a: Candidate, b: Candidate) => number): Candidate[] {
  if (all.length <= k * 4) return all.sort(order)
  // The heap's top is the worst kept.
  const heap = new Heap<Candidate>((a, b) => order(b, a))
  for (const c of all) {
    if (heap.size < k) heap.push(c)
    else if (order(c, heap.peek()!) < 0) heap.replaceTop(c)
  }
  return heap.drain().sort(order)
}

interface Candidate {
  readonly doc: Doc
  readonly score: number
}

/** Runs a checked query over the index: AND of its terms, filters, BM25, phrases, snippets. */
export async function runQuery(
  index: InvertedIndex,
  request: SearchRequest,
  query: ParsedQuery,
  source: TextSource,
  budget = SEARCH_WORK_BUDGET,
): Promise<SearchResult> {
  const meter = new WorkMeter(budget)
  let incomplete = false
  if (!query.terms.length) return { hits: [], incomplete }
  const matches: Match[] = []
  for (const t of query.terms) {
    if (!t.prefix) matches.push(exactMatch(index, t.term))
    else {
      const { match, truncated } = prefixMatch(index, t.term, meter)
      incomplete ||= truncated
      matches.push(match)
    }
  }
  matches.sort((a, b) => a.size - b.size)
  if (matches[0].size === 0) return { hits: [], incomplete }

  const sessions = request.session_ids && new Set(request.session_ids)
  const roles = request.roles && new Set<SearchRole>(request.roles)
  const paths = new Map<string, Set<string>>()
  const pathOf = (sid: string): Set<string> => {
    let path = paths.get(sid)
    if (path) return path
    paths.set(sid, (path = new Set()))
    const docs = index.sessions.get(sid)?.docs
    // Walks up from the leaf, whole (a hit's flag must be right); bounded by the session's size
    // (the check against `path` stops at a cycle), and paid for.
    for (let id = source.leaf(sid) ?? null; id !== null && !path.has(id);) {
      path.add(id)
      id = docs?.get(id)?.parent ?? null
    }
    meter.take(Math.min(path.size, meter.remaining))
    return path
  }
  const onPath = (doc: Doc): boolean => doc.eid === null || pathOf(doc.sid).has(doc.eid)

  const candidates: Candidate[] = []
  const [first, ...rest] = matches
  for (const doc of first.docs()) {
    if (!meter.take(matches.length)) {
      incomplete = true
      break
    }
    if (doc.role === null) continue
    if (sessions && !sessions.has(doc.sid)) continue
    if (roles && !roles.has(doc.role)) continue
    if (request.from !== undefined && doc.ts < request.from) continue
    if (request.to !== undefined && doc.ts >= request.to) continue
    let score = first.weight(doc)!
    for (const m of rest) {
      const w = m.weight(doc)
      if (w === undefined) {
        score = NaN
        break
      }
      score += w
    }
    if (Number.isNaN(score)) continue
    if (request.active_path_only && !onPath(doc)) continue
    candidates.push({ doc, score })
  }
  // Relevance first; scores equal to a millionth are ties, and the newer message wins them.
  const key = (c: Candidate): number => Math.round(c.score * 1e6)
  const order = (a: Candidate, b: Candidate): number =>
    key(b) - key(a) ||
    b.doc.ts - a.doc.ts ||
    (a.doc.sid < b.doc.sid ? -1 : a.doc.sid > b.doc.sid ? 1 : 0) ||
    ((a.doc.eid ?? '') < (b.doc.eid ?? '') ? -1 : 1)
  // The page is taken from the best few (a heap, O(n log k)); the rest is sorted only when those
  // ran out (hits whose text is gone, phrases that did not hold).
  const ranked = best(candidates, request.limit * 2, order)
  // The sort is paid for; it runs even past the budget (on candidates the budget bounded already).
  if (!meter.take(Math.ceil(candidates.length * Math.log2(ranked.length + 1)))) incomplete = true
  const exact = new Set(query.terms.filter((t) => !t.prefix).map((t) => t.term))
  const prefixes = query.terms.filter((t) => t.prefix).map((t) => t.term)
  const matchesTerm = (term: string): boolean => exact.has(term) || prefixes.some((p) => term.startsWith(p))
  const hits: SearchHit[] = []
  for (let i = 0; hits.length < request.limit; i++) {
    if (i === ranked.length) {
      if (ranked.length >= candidates.length) break
      // The best few ran out: the rest, in order (the order is total, so it continues theirs).
      ranked.push(...candidates.sort(order).slice(ranked.length))
      if (!meter.take(Math.ceil(candidates.length * Math.log2(candidates.length + 1)))) incomplete = true
    }
    const c = ranked[i]
    const text = await source.text(c.doc.sid, c.doc.eid)
    if (text === undefined) continue
    if (!meter.take(text.length)) {
      incomplete = true
      break
    }
    const tokens = tokenize(text)
    if (!query.phrases.every((p) => holdsPhrase(tokens, p))) continue
    hits.push({
      session_id: c.doc.sid,
      entry_id: c.doc.eid,
      role: c.doc.role!,
      score: c.score,
      snippet: snippetOf(text, tokens, matchesTerm),
      on_active_path: onPath(c.doc),
      timestamp: c.doc.ts,
    })
  }
  return { hits, incomplete }
}
