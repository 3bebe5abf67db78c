import { WorkMeter } from '../ops/work.js'
import { Heap } from '../util/heap.js'
import type { SearchRequest } from '../validation/search-request.js'
import type { Doc, InvertedIndex, Postings } from './inverted-index.js'
import type { ParsedQuery } from './parse-query.js'
import { rankOrder } from './rank-order.js'
import { hitMaker, type SearchHit, type SearchResult } from './hit.js'
import { tokenize, type Token } from './tokenize.js'
import { docFilter } from './doc-filter.js'

/**
 * What one query may spend (see `WorkMeter`): a unit per posting looked at, per vocabulary term
 * scanned for a prefix, per candidate compared in the sort (log n), per character tokenized for
 * a phrase check or a snippet, per entry walked for the active path. About 10–40 ms on a loaded
 * 2-core machine; a normal query over 100,000 messages spends a fraction of it. Past it the
 * answer is the best among what was looked at, with `incomplete: true`.
 */
export const SEARCH_WORK_BUDGET = 2_000_000

/** How a query reads what the index does not hold: texts (for phrases and snippets) and leaves. */
export interface TextSource {
  /** The searchable text of an entry (title when `eid` is null), or undefined when it is gone. */
  text(sid: string, eid: string | null): Promise<string | undefined>
  /** The session's active leaf. */
  leaf(sid: string): string | null | undefined
}

/**
 * One query term's documents: `weights[id]` is the term's BM25 weight in document `id` (0 when
 * the document does not hold it; a weight is always positive), filled from the postings.
 */
interface Match {
  readonly size: number
  /** The term's postings lists (one for a word, the expansions for a prefix). */
  readonly lists: readonly Postings[]
}

/**
 * The weights of one match by document id: for a prefix, each document weighted by the best of
 * the words it holds. Work is paid per posting before it is read.
 */
function weightsOf(
  index: InvertedIndex,
  match: Match,
  meter: WorkMeter,
): { weights: Float64Array; cut: boolean } {
  const weights = new Float64Array(index.idBound)
  for (const list of match.lists) {
    if (!meter.take(list.n)) return { weights, cut: true }
    for (let i = 0; i < list.n; i++) {
      const id = list.ids[i]
      if (index.doc(id) === undefined) continue
      const w = index.weight(id, list.tfs[i], list.df)
      if (w > weights[id]) weights[id] = w
    }
  }
  return { weights, cut: false }
}

/** Whether `tokens` hold `phrase`'s terms one after the other. */
export const holdsPhrase = (tokens: readonly Token[], phrase: readonly string[]): boolean => {
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
    if (!t.prefix) {
      const list = index.postings(t.term)
      matches.push({ size: list?.df ?? 0, lists: list ? [list] : [] })
    } else {
      const { terms, truncated } = index.prefixTerms(t.term, meter)
      incomplete ||= truncated
      // A prefix's size is its largest expansion's (a lower bound of the union): enough to
      // choose which match drives the scan.
      matches.push({ size: terms.reduce((n, l) => Math.max(n, l.df), 0), lists: terms })
    }
  }
  matches.sort((a, b) => a.size - b.size)
  if (matches[0].size === 0) return { hits: [], incomplete }

  const { filtered, accepts, onPath } = docFilter(
    index,
    (sid) => source.leaf(sid),
    request,
    (n) => meter.take(Math.min(n, meter.remaining)),
  )

  // The other terms' weights, by document id (the scan of the rarest looks each document up).
  const [first, ...rest] = matches
  const others: Float64Array[] = []
  for (const m of rest) {
    const { weights, cut } = weightsOf(index, m, meter)
    others.push(weights)
    incomplete ||= cut
  }
  const candidates: Candidate[] = []
  // The rarest term's documents, each scored where every other term holds it too.
  const scan = (id: number, w: number): void => {
    let score = w
    for (const weights of others) {
      const o = weights[id]
      if (o === 0) return
      score += o
    }
    const doc = index.doc(id)!
    if (filtered && !accepts(doc)) return
    if (request.active_path_only && !onPath(doc)) return
    candidates.push({ doc, score })
  }
  if (first.lists.length === 1) {
    const list = first.lists[0]
    for (let i = 0; i < list.n; i++) {
      if (!meter.take(matches.length)) {
        incomplete = true
        break
      }
      const id = list.ids[i]
      if (index.doc(id) === undefined) continue
      scan(id, index.weight(id, list.tfs[i], list.df))
    }
  } else {
    const { weights, cut } = weightsOf(index, first, meter)
    incomplete ||= cut
    for (let id = 0; id < weights.length; id++) {
      if (weights[id] === 0) continue
      if (!meter.take(matches.length)) {
        incomplete = true
        break
      }
      scan(id, weights[id])
    }
  }
  // Relevance first; scores equal to a millionth are ties, and the newer message wins them.
  const order = (a: Candidate, b: Candidate): number => rankOrder(a.score, a.doc, b.score, b.doc)
  // The page is taken from the best few (a heap, O(n log k)); the rest is sorted only when those
  // ran out (hits whose text is gone, phrases that did not hold).
  const ranked = best(candidates, request.limit * 2, order)
  // The sort is paid for; it runs even past the budget (on candidates the budget bounded already).
  if (!meter.take(Math.ceil(candidates.length * Math.log2(ranked.length + 1)))) incomplete = true
  const hitOf = hitMaker(query)
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
    hits.push(hitOf(c.doc, c.score, onPath(c.doc), text, tokens))
  }
  return { hits, incomplete }
}
