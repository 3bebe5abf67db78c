import type pg from 'pg'

// Each principal's vocabulary with its document counts (`colloquy_terms`, migration 7): what a
// search reads for a term's idf and a prefix's words, in one index probe or one range, where it
// counted the term's documents (bounded, so a common word's count was a guess) before. Kept
// exact by every commit: each statement that writes or deletes documents stages what it added
// and removed per (owner, term), and the commit applies the sum once, inside its change-log
// statement (no round trip of its own). With each count, `tf_max`: at least the most times one document holds the term
// (raised by additions, never lowered), which bounds the term's BM25 weight for a top-k read.
//
// The staged rows stay inside PostgreSQL: a setting local to the transaction
// (`colloquy.term_deltas`, a JSON array of `[owner, term, df, tf]`), which COMMIT and ROLLBACK
// both clear. Sent to Node and back, they were most of a commit's rows to parse and its largest
// parameters (a dozen rows per message appended).

/** The rows staged so far in this transaction (`jsonb`, an empty array when none). */
const STAGED = `coalesce(nullif(current_setting('colloquy.term_deltas', true), ''), '[]')::jsonb`

/**
 * An expression that adds the term rows (`termRowsSql`) of a relation `docs(owner, terms, sign)`
 * to the transaction's staged rows. Its value is the setting's new text, never null: a statement
 * evaluates it by testing that (`… IS NULL`, always false).
 */
export const stageTermRowsSql = (docs: string): string =>
  `set_config('colloquy.term_deltas', (${STAGED} || coalesce((SELECT jsonb_agg(jsonb_build_array(t.owner, t.term, t.df, t.tf)) FROM (${termRowsSql(docs)}) t), '[]'::jsonb))::text, true)`

/**
 * Applies the staged counts in a statement of their own: for a commit that writes no change-log
 * statement (which otherwise applies them, `termCountsSql`). It takes the clock row's lock
 * first all the same, as that statement does.
 */
export async function applyStagedTermCounts(client: pg.ClientBase): Promise<void> {
  await client.query(
    `WITH clock AS (SELECT head FROM colloquy_clock WHERE id = 1 FOR UPDATE), ${termCountsSql('clock')} SELECT 1`,
  )
}

/**
 * The common table expressions that apply the transaction's staged counts (summed by owner and
 * term: several statements may have staged rows for one term), to stand beside others in one
 * statement: a term whose count falls to zero is deleted (a prefix never expands to it), the
 * others are added to, in (owner, term) order; a row the commit leaves as it was (a title
 * rewritten with its words: one document removed, one added) is not written again. The two never
 * touch the same row, as a statement's parts must not. `after`: a relation the rows are joined
 * to (one row), so the counts are written only once it is read: the change log's clock row,
 * whose lock orders commits, so two commits never wait on each other's term rows in a cycle and
 * each reads the counts the one before it left (an update's re-check reads the newest row).
 */
export const termCountsSql = (after?: string): string =>
  `tc AS (SELECT u.owner, u.term, sum(u.df)::bigint AS df, coalesce(max(u.tf), 0)::int AS tf
       FROM (SELECT x->>0 AS owner, x->>1 AS term, (x->>2)::bigint AS df, (x->>3)::int AS tf FROM jsonb_array_elements(${STAGED}) x) u${after ? `, ${after}` : ''}
       GROUP BY u.owner, u.term HAVING sum(u.df) <> 0 OR max(u.tf) > 0),
  tc_gone AS (DELETE FROM colloquy_terms t USING tc
       WHERE tc.df < 0 AND t.owner IS NOT DISTINCT FROM tc.owner AND t.term = tc.term AND t.df + tc.df <= 0
       RETURNING t.owner, t.term),
  tc_kept AS (INSERT INTO colloquy_terms AS t (owner, term, df, tf_max)
       SELECT owner, term, df, tf FROM tc
         WHERE NOT EXISTS (SELECT 1 FROM tc_gone g WHERE g.owner IS NOT DISTINCT FROM tc.owner AND g.term = tc.term)
         ORDER BY owner COLLATE "C" NULLS FIRST, term
       ON CONFLICT (owner, term) DO UPDATE SET df = t.df + EXCLUDED.df, tf_max = greatest(t.tf_max, EXCLUDED.tf_max)
         WHERE EXCLUDED.df <> 0 OR EXCLUDED.tf_max > t.tf_max)`

/**
 * The terms of some documents as `(owner, term, df, tf)` rows, from a relation `docs(owner,
 * terms, sign)` (sign: +1 added, -1 removed): each distinct term of each `tsvector` once per
 * document; `tf` the most times an added document holds it (a `tsvector` position here is a
 * count, `search-doc.ts`).
 */
export const termRowsSql = (docs: string): string =>
  `SELECT d.owner, u.lexeme AS term, sum(d.sign)::bigint AS df, max(u.positions[1]) FILTER (WHERE d.sign > 0)::int AS tf
     FROM ${docs} d, unnest(d.terms) u GROUP BY d.owner, u.lexeme HAVING sum(d.sign) <> 0 OR bool_or(d.sign > 0)`
