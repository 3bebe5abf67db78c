import {
  bm25,
  entryText,
  holdsPhrase,
  parseQuery,
  PREFIX_KEEP,
  PREFIX_SCAN,
  rankOrder,
  SEARCH_WORK_BUDGET,
  hitMaker,
  tokenize,
  type SearchHit,
  type SearchRequest,
  type SearchResult,
  type SearchRole,
} from '@colloquy/core/search'
import type { SessionEntry } from '@colloquy/core'
import type pg from 'pg'
import { fromDb, toDb } from '../storage/postgres/codec.js'
import { jsonFieldSql } from '../storage/postgres/json-field.js'
import { lexeme } from './search-doc.js'

/**
 * Rows the statement reading a query's candidates reads at most (the documents holding every
 * term, scored here): a few tens of milliseconds. Terms' counts and a prefix's words come from
 * `colloquy_terms` (`term-counts.ts`) in an index probe or range each. Past the bound the
 * answer is the best among what was read, with `incomplete: true`, as core's index answers past
 * its work budget.
 */
export const FULL_TEXT_ROWS = 20_000

/** A principal's full text (null: every session, tenancy off). */
export type FullTextSearch = (principal: string | null, request: SearchRequest) => Promise<SearchResult>

// The documents a principal may find: their sessions' entries and titles. `$1` the owner (null:
// every session), `$2` the `tsquery`. Sealed sessions have no terms (`search-doc.ts`).
const ENTRY_DOCS = `SELECT e.session_id AS sid, e.id AS eid, e.terms, e.len, e.role, e.ts FROM colloquy_entries e
    JOIN colloquy_sessions s ON s.id = e.session_id WHERE ($1::text IS NULL OR s.owner = $1) AND e.terms @@ $2::tsquery`
const TITLE_DOCS = `SELECT s.id AS sid, NULL AS eid, s.title_terms AS terms, s.title_len AS len, 'title' AS role, ${jsonFieldSql('s.meta', 'updated_at')}::float8 AS ts
    FROM colloquy_sessions s WHERE ($1::text IS NULL OR s.owner = $1) AND s.title_terms @@ $2::tsquery`
const DOCS = `${ENTRY_DOCS} UNION ALL ${TITLE_DOCS}`

/** Entries a top-k read takes per statement. */
const TOP_PAGE = 500

/** A candidate row: a document's ids as stored, its length, role, time and the query's words in it with their counts. */
interface CandidateRow {
  sid: string
  eid: string | null
  len: number
  role: SearchRole
  ts: number
  lex: string[]
  tf: number[]
}

/** Scores as `rankOrder` compares them (equal to a millionth: ties). */
const rank = (score: number): number => Math.round(score * 1e6)

/**
 * The best `limit` entries of a query whose candidates are more than a statement reads: entries
 * are read shortest first, newest first among equals (`colloquy_entries_rank`, migration 7), a
 * page at a time, the best kept. Every term weighs less in a longer document, and no document
 * holds a term more than its `tf_max` times, so once the page's last entry has `len` terms and
 * `ts`, an unread one weighs at most `bound(len)` (`bound(len + 1)` if it is longer); the read
 * stops when no unread entry can rank above the `limit`-th best (a tie on the score goes to the
 * newer, and every unread entry as long as the last is no newer than it). Past `maxRows` rows it
 * stops anyway: the best of what was read, not complete.
 */
async function topEntries(
  client: pg.PoolClient,
  q: {
    /** The candidates (`ENTRY_DOCS` filtered, with their terms), `$1`… in `params`. */
    docs: string
    params: readonly unknown[]
    limit: number
    maxRows: number
    candidatesOf: (rows: readonly CandidateRow[]) => Promise<Candidate[]>
    bound: (len: number) => number
  },
): Promise<{ best: Candidate[]; complete: boolean }> {
  const best: Candidate[] = []
  const at = q.params.length
  // `$3` (the bounded read's limit) is not used here, but typed: PostgreSQL types every `$n` sent.
  const sql = `SELECT * FROM (${q.docs}) c WHERE $3::int > 0 AND c.len IS NOT NULL AND c.ts IS NOT NULL
      AND (c.len, -c.ts, c.sid, c.eid) > ($${at + 1}::int, $${at + 2}::float8, $${at + 3}::text, $${at + 4}::text)
    ORDER BY c.len, -c.ts, c.sid, c.eid LIMIT $${at + 5}::int`
  let after: unknown[] = [-1, -Infinity, '', '']
  for (let read = 0; ;) {
    const page = Math.max(1, Math.min(TOP_PAGE, q.maxRows - read))
    const rows = (await client.query<CandidateRow>(sql, [...q.params, ...after, page])).rows
    read += rows.length
    for (const c of await q.candidatesOf(rows)) {
      if (best.length === q.limit && rankOrder(c.score, c, best[q.limit - 1].score, best[q.limit - 1]) >= 0)
        continue
      let i = best.length
      while (i > 0 && rankOrder(c.score, c, best[i - 1].score, best[i - 1]) < 0) i--
      best.splice(i, 0, c)
      if (best.length > q.limit) best.pop()
    }
    if (rows.length < page) return { best, complete: true }
    const last = rows[rows.length - 1]
    if (best.length === q.limit) {
      const kth = best[q.limit - 1]
      if (
        rank(kth.score) > rank(q.bound(last.len + 1)) &&
        (rank(kth.score) > rank(q.bound(last.len)) || kth.ts > last.ts)
      )
        return { best, complete: true }
    }
    if (read >= q.maxRows) return { best, complete: false }
    after = [last.len, -last.ts, last.sid, last.eid]
  }
}

/**
 * How many of the principal's documents hold a term (`$2`), from the counts each commit keeps
 * (`term-counts.ts`): one index probe, exact however common the term. With tenancy off (`all`),
 * every owner's counts summed.
 */
const countSql = (all: boolean): string =>
  `SELECT coalesce(sum(df), 0)::float8 AS n, coalesce(max(tf_max), 0)::int AS tf FROM colloquy_terms WHERE ${all ? '$1::text IS NULL' : 'owner = $1'} AND term = $2`

/**
 * The principal's words in `[$2, $3)` (a prefix and the first string after all it starts, in
 * code-point order: `term` is "C"), each with its document count, at most one past
 * `PREFIX_SCAN`: one range of an index, however many documents hold them.
 */
const expandSql = (all: boolean, bounded: boolean): string =>
  all
    ? `SELECT term, sum(df)::float8 AS df, max(tf_max) AS tf FROM colloquy_terms WHERE $1::text IS NULL AND term >= $2 ${bounded ? 'AND term < $3' : ''}
         GROUP BY term HAVING sum(df) > 0 ORDER BY term LIMIT ${PREFIX_SCAN + 1}`
    : `SELECT term, df::float8 AS df, tf_max AS tf FROM colloquy_terms WHERE owner = $1 AND term >= $2 ${bounded ? 'AND term < $3' : ''}
         AND df > 0 ORDER BY term LIMIT ${PREFIX_SCAN + 1}`

/**
 * The first string in code-point order after every string that starts with `prefix` (null: none,
 * the prefix is all U+10FFFF): its last code point below U+10FFFF moved up by one.
 */
function pastPrefix(prefix: string): string | null {
  const points = [...prefix]
  while (points.length) {
    const c = points.pop()!.codePointAt(0)!
    if (c < 0x10ffff) return points.join('') + String.fromCodePoint(c + 1 === 0xd800 ? 0xe000 : c + 1)
  }
  return null
}

/** The principal's documents and their terms counted, for BM25 (sums kept per session by each commit). */
const STATS = `SELECT (coalesce(sum(search_docs), 0) + count(title_len))::float8 AS n, (coalesce(sum(search_len), 0) + coalesce(sum(title_len), 0))::float8 AS total
  FROM colloquy_sessions WHERE ($1::text IS NULL OR owner = $1)`

/**
 * Walks each session's active path from its leaf (`UNION`: a cycle ends the walk), bounded by
 * the sessions' sizes: `$1` the sessions.
 */
const PATHS = `WITH RECURSIVE p(sid, eid) AS (
    SELECT s.id, s.leaf FROM colloquy_sessions s WHERE s.id = ANY($1::text[]) AND s.leaf IS NOT NULL
    UNION SELECT e.session_id, e.parent FROM p JOIN colloquy_entries e ON e.session_id = p.sid AND e.id = p.eid WHERE e.parent IS NOT NULL)
  SELECT sid, eid FROM p`

interface Candidate {
  /** Ids as stored (`toDb`), and as they are. */
  readonly db: readonly [string, string | null]
  readonly sid: string
  readonly eid: string | null
  readonly role: SearchRole
  readonly ts: number
  readonly score: number
}

/** One query term's documents as the database counted them: its words and their counts. */
interface Match {
  readonly prefix: boolean
  /** The words it matches (one for a word; the kept expansions for a prefix), with their counts. */
  readonly words: ReadonlyArray<{ term: string; df: number; tfMax: number }>
  readonly size: number
}

const tsquery = (matches: readonly Match[]): string =>
  matches.map((m) => `(${m.words.map((w) => lexeme(w.term)).join(' | ')})`).join(' & ')

/**
 * `session::search` over PostgreSQL's own full text: the terms each commit stores (core's
 * tokenizer, `search-doc.ts`) found through a GIN index, scored by core's BM25 with the
 * principal's statistics (documents and their lengths summed per session, each term's documents
 * counted by the commits, `term-counts.ts`), in core's order, phrases checked and snippets made by core, and texts read only for
 * the page. Everything is read in one snapshot (`REPEATABLE READ`). What the server holds in
 * memory is one query's candidates, not an index per principal.
 */
export function postgresFullText(
  pool: pg.Pool,
  /** `rows`: what one statement reads at most (default `FULL_TEXT_ROWS`; a test's is small). */
  options: { rows?: number } = {},
): FullTextSearch {
  const rows = options.rows ?? FULL_TEXT_ROWS
  return async (principal, request) => {
    const query = parseQuery(request.query, request.prefix)
    if (!query.terms.length) return { hits: [], incomplete: false }
    const client = await pool.connect()
    let failed: Error | undefined
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const result = await answer(client, principal, request, query, rows)
      await client.query('COMMIT')
      return result
    } catch (e) {
      failed = e instanceof Error ? e : new Error(String(e))
      await client.query('ROLLBACK').catch(() => {})
      throw e
    } finally {
      client.release(failed)
    }
  }
}

async function answer(
  client: pg.PoolClient,
  principal: string | null,
  request: SearchRequest,
  query: ReturnType<typeof parseQuery>,
  maxRows: number,
): Promise<SearchResult> {
  let incomplete = false
  const matches: Match[] = []
  const all = principal === null
  for (const t of query.terms) {
    if (!t.prefix) {
      const { n: df, tf } = (
        await client.query<{ n: number; tf: number }>(countSql(all), [principal, t.term])
      ).rows[0]
      matches.push({ prefix: false, words: df ? [{ term: t.term, df, tfMax: tf }] : [], size: df })
      continue
    }
    const past = pastPrefix(t.term)
    const rows = (
      await client.query<{ term: string; df: number; tf: number }>(expandSql(all, past !== null), [
        principal,
        t.term,
        ...(past === null ? [] : [past]),
      ])
    ).rows
    // As core's index expands a prefix: its vocabulary in order (UTF-16, as JavaScript sorts), the
    // first `PREFIX_SCAN` looked at, the `PREFIX_KEEP` most frequent kept (a stable sort).
    let words = rows
      .map((r) => ({ term: r.term, df: r.df, tfMax: r.tf }))
      .sort((a, b) => (a.term < b.term ? -1 : 1))
    if (words.length > PREFIX_SCAN) {
      words = words.slice(0, PREFIX_SCAN)
      incomplete = true
    }
    if (words.length > PREFIX_KEEP) {
      words = words.sort((a, b) => b.df - a.df).slice(0, PREFIX_KEEP)
      incomplete = true
    }
    matches.push({ prefix: true, words, size: words.reduce((n, w) => Math.max(n, w.df), 0) })
  }
  // Core scores a document by adding its terms' weights rarest first: the same order here, so
  // the same additions give the same score to the last bit.
  matches.sort((a, b) => a.size - b.size)
  if (matches[0].size === 0) return { hits: [], incomplete }

  const { n, total } = (await client.query<{ n: number; total: number }>(STATS, [principal])).rows[0]
  const filters: string[] = []
  const params: unknown[] = [principal, tsquery(matches), maxRows + 1]
  const param = (v: unknown): string => `$${params.push(v)}`
  if (request.session_ids) filters.push(`d.sid = ANY(${param(request.session_ids.map(toDb))}::text[])`)
  if (request.roles) filters.push(`d.role = ANY(${param(request.roles)}::text[])`)
  if (request.from !== undefined) filters.push(`d.ts >= ${param(request.from)}::float8`)
  if (request.to !== undefined) filters.push(`d.ts < ${param(request.to)}::float8`)
  const where = filters.length ? `WHERE ${filters.join(' AND ')}` : ''
  const termsOf = `LATERAL (SELECT array_agg(u.lexeme) AS lex, array_agg(u.positions[1]) AS tf FROM unnest(d.terms) u
    WHERE u.lexeme = ANY(${param([...new Set(matches.flatMap((m) => m.words.map((w) => w.term)))])}::text[])) x`

  const paths = new Map<string, Set<string>>()
  const walk = async (sids: Iterable<string>): Promise<void> => {
    const need = [...new Set(sids)].filter((s) => !paths.has(s))
    if (!need.length) return
    for (const s of need) paths.set(s, new Set())
    for (const r of (await client.query<{ sid: string; eid: string }>(PATHS, [need])).rows)
      paths.get(r.sid)!.add(r.eid)
  }
  // Ids as stored (`toDb`) until a hit is made.
  const onPath = ([sid, eid]: readonly [string, string | null]): boolean =>
    eid === null || paths.get(sid)!.has(eid)

  // Core's score: each term's weight (a prefix's best word) added rarest first.
  const weigh = (tfOf: (word: Match['words'][number]) => number | undefined, len: number): number => {
    let score = 0
    let first = true
    for (const m of matches) {
      let w = 0
      for (const word of m.words) {
        const tf = tfOf(word)
        if (tf !== undefined) w = Math.max(w, bm25(tf, word.df, len, n, total))
      }
      score = first ? w : score + w
      first = false
    }
    return score
  }
  const candidatesOf = async (rows: readonly CandidateRow[]): Promise<Candidate[]> => {
    if (request.active_path_only) await walk(rows.filter((r) => r.eid !== null).map((r) => r.sid))
    const out: Candidate[] = []
    for (const r of rows) {
      if (request.active_path_only && !onPath([r.sid, r.eid])) continue
      const tfs = new Map<string, number>()
      for (let i = 0; i < (r.lex?.length ?? 0); i++) tfs.set(r.lex[i], r.tf[i])
      const score = weigh((w) => tfs.get(w.term), r.len)
      const sid = fromDb(r.sid)
      const eid = r.eid === null ? null : fromDb(r.eid)
      out.push({ db: [r.sid, r.eid], sid, eid, role: r.role, ts: r.ts, score })
    }
    return out
  }

  // The rarest term's documents bound the candidates: when they fit a statement, all are read
  // and scored. When they do not and no phrase can turn a candidate away, the best `limit` are
  // read in order instead (`topEntries`); otherwise the best of a statement's worth, incomplete.
  const most = matches[0].words.reduce((k, w) => k + w.df, 0)
  let candidates: Candidate[]
  if (most > maxRows && !query.phrases.length) {
    const top = await topEntries(client, {
      docs: `SELECT d.sid, d.eid, d.len, d.role, d.ts, x.lex, x.tf FROM (SELECT * FROM (${ENTRY_DOCS}) d ${where}) d, ${termsOf}`,
      params,
      limit: request.limit,
      maxRows,
      candidatesOf,
      // No unread entry of `len` terms or more weighs more than this (each term at its most).
      bound: (len) => weigh((w) => w.tfMax, len),
    })
    const titles = (
      await client.query<CandidateRow>(
        `SELECT d.sid, d.eid, d.len, d.role, d.ts, x.lex, x.tf FROM (SELECT * FROM (${TITLE_DOCS}) d ${where} LIMIT $3) d, ${termsOf}`,
        params,
      )
    ).rows
    if (!top.complete || titles.length > maxRows) incomplete = true
    candidates = [...top.best, ...(await candidatesOf(titles.slice(0, maxRows)))]
  } else {
    const rows = (
      await client.query<CandidateRow>(
        `SELECT d.sid, d.eid, d.len, d.role, d.ts, x.lex, x.tf FROM (SELECT * FROM (${DOCS}) d ${where} LIMIT $3) d, ${termsOf}`,
        params,
      )
    ).rows
    if (rows.length > maxRows) {
      rows.length = maxRows
      incomplete = true
    }
    candidates = await candidatesOf(rows)
  }
  candidates.sort((a, b) => rankOrder(a.score, a, b.score, b))

  const hitOf = hitMaker(query)
  const hits: SearchHit[] = []
  let chars = 0
  // Texts are read for the page only: the best `limit` (more when phrases turn some away), in
  // batches, until the page is full, the candidates end or the budget of characters is spent.
  for (let at = 0; hits.length < request.limit && at < candidates.length;) {
    const batch = candidates.slice(at, at + (request.limit - hits.length) * (query.phrases.length ? 2 : 1))
    at += batch.length
    const texts = await textsOf(client, batch)
    await walk(batch.filter((c) => c.eid !== null).map((c) => c.db[0]))
    for (const c of batch) {
      if (hits.length >= request.limit) break
      const text = texts.get(JSON.stringify(c.db))
      if (text === undefined) continue
      chars += text.length
      if (chars > SEARCH_WORK_BUDGET) {
        incomplete = true
        return { hits, incomplete }
      }
      const tokens = tokenize(text)
      if (!query.phrases.every((p) => holdsPhrase(tokens, p))) continue
      hits.push(hitOf(c, c.score, onPath(c.db), text, tokens))
    }
  }
  return { hits, incomplete }
}

/** The searchable texts of some documents (entries' as core reads them, titles), by `[sid, eid]`. */
async function textsOf(client: pg.PoolClient, docs: readonly Candidate[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const entries = docs.filter((d) => d.eid !== null).map((d) => d.db)
  const titles = docs.filter((d) => d.eid === null).map((d) => d.db)
  if (entries.length)
    for (const r of (
      await client.query<{ sid: string; eid: string; entry: SessionEntry }>(
        `SELECT e.session_id AS sid, e.id AS eid, e.entry FROM colloquy_entries e
           JOIN unnest($1::text[], $2::text[]) AS k(s, i) ON e.session_id = k.s AND e.id = k.i`,
        [entries.map((d) => d[0]), entries.map((d) => d[1])],
      )
    ).rows) {
      const text = entryText(r.entry, { thinking: false })
      if (text !== null) out.set(JSON.stringify([r.sid, r.eid]), text)
    }
  if (titles.length)
    for (const r of // The meta whole, parsed here: a title may hold a NUL, which no SQL text can (`jsonFieldSql`).
    (
      await client.query<{ sid: string; meta: { title?: unknown } }>(
        `SELECT id AS sid, meta FROM colloquy_sessions WHERE id = ANY($1::text[])`,
        [titles.map((d) => d[0])],
      )
    ).rows)
      if (typeof r.meta.title === 'string' && r.meta.title)
        out.set(JSON.stringify([r.sid, null]), r.meta.title)
  return out
}
