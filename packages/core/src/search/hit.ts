import type { SearchRole } from '../validation/search-request.js'
import type { ParsedQuery } from './parse-query.js'
import { snippetOf, type Snippet } from './snippet.js'
import type { Token } from './tokenize.js'

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

/** A scored document of a page, as every query runner holds it. */
export interface HitDoc {
  readonly sid: string
  readonly eid: string | null
  readonly role: SearchRole | null
  readonly ts: number
}

/**
 * How a page's hits are made, for the device's scan and both servers' queries alike: the same
 * words highlighted (a query term exactly, the last term's prefix when it is one) and the same
 * fields, so a hit merged from the server looks like one found here.
 */
export function hitMaker(
  query: ParsedQuery,
): (doc: HitDoc, score: number, onPath: boolean, text: string, tokens: readonly Token[]) => SearchHit {
  const exact = new Set(query.terms.filter((t) => !t.prefix).map((t) => t.term))
  const prefixes = query.terms.filter((t) => t.prefix).map((t) => t.term)
  const matches = (term: string): boolean => exact.has(term) || prefixes.some((p) => term.startsWith(p))
  return (doc, score, onPath, text, tokens) => ({
    session_id: doc.sid,
    entry_id: doc.eid,
    // Only messages and titles hold text (`entryText`), so only documents with a role are hits.
    role: doc.role!,
    score,
    snippet: snippetOf(text, tokens, matches),
    on_active_path: onPath,
    timestamp: doc.ts,
  })
}
