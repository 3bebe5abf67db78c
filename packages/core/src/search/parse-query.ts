import { invalid } from '../model/errors.js'
import { SEARCH_LIMITS } from '../validation/search-request.js'
import { isCjkChar, tokenize, type Token } from './tokenize.js'

export interface QueryTerm {
  readonly term: string
  /** Matches every term starting with it (the word being typed, or one Han/Kana/Hangul character). */
  readonly prefix: boolean
}

export interface ParsedQuery {
  /** Every term a hit must hold (distinct). */
  readonly terms: readonly QueryTerm[]
  /** Runs of terms a hit must hold one after the other: quoted phrases and CJK words of 2+ pairs. */
  readonly phrases: readonly (readonly string[])[]
}

const QUOTED = /"([^"]*)"?/g

/** Consecutive pairs from one CJK run: tokens whose spans overlap. */
function cjkGroups(tokens: readonly Token[]): Token[][] {
  const groups: Token[][] = []
  for (const t of tokens) {
    const last = groups[groups.length - 1]
    const prev = last?.[last.length - 1]
    if (prev && t.start < prev.end) last.push(t)
    else groups.push([t])
  }
  return groups
}

/**
 * A query as typed: quoted parts are phrases, the rest words; the last word, when the query does
 * not end in a space or a closing quote, is a prefix. Refuses more than `SEARCH_LIMITS.terms`.
 */
export function parseQuery(query: string, prefix: boolean): ParsedQuery {
  const phrases: string[][] = []
  const all: QueryTerm[] = []
  let rest = ''
  let at = 0
  for (const m of query.matchAll(QUOTED)) {
    rest += query.slice(at, m.index) + ' '
    at = m.index + m[0].length
    const words = tokenize(m[1]).map((t) => t.term)
    if (words.length > 1) phrases.push(words)
    for (const term of words) all.push({ term, prefix: false })
  }
  rest += query.slice(at)
  const open = prefix && !/[\s"]$/u.test(query)
  const tokens = tokenize(rest)
  const last = tokens[tokens.length - 1]
  for (const group of cjkGroups(tokens)) {
    // Overlapping tokens are the pairs of one CJK word: they must stand together, as typed.
    if (group.length > 1) phrases.push(group.map((t) => t.term))
    for (const t of group) {
      const cjk = isCjkChar(t.term)
      // Pairs of a longer CJK word are whole; a lone character or the word being typed is a prefix.
      const overlapping = group.length > 1
      all.push({ term: t.term, prefix: cjk || (open && t === last && !overlapping) })
    }
  }
  if (all.length > SEARCH_LIMITS.terms)
    throw invalid(`query: at most ${SEARCH_LIMITS.terms} terms (it has ${all.length})`)
  // One entry per term: exact beats prefix (an exact term is a stricter condition than its prefix).
  const byTerm = new Map<string, QueryTerm>()
  for (const t of all) {
    const held = byTerm.get(t.term)
    if (!held || (held.prefix && !t.prefix)) byTerm.set(t.term, t)
  }
  return { terms: [...byTerm.values()], phrases }
}
