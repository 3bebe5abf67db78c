import type pg from 'pg'

// Each principal's vocabulary with its document counts (`colloquy_terms`, migration 7): what a
// search reads for a term's idf and a prefix's words, in one index probe or one range, where it
// counted the term's documents (bounded, so a common word's count was a guess) before. Kept
// exact by every commit: each statement that writes or deletes documents stages what it added
// and removed per (owner, term), and the commit applies the sum once, inside its change-log
// statement (no round trip of its own). With each count, `tf_max`: at least the most times one document holds the term
// (raised by additions, never lowered), which bounds the term's BM25 weight for a top-k read.
//
// The staged rows stay inside PostgreSQL, in a temporary table of the connection
// (`colloquy_term_deltas`) that every COMMIT empties (ON COMMIT DELETE ROWS, a truncation) and a
// ROLLBACK leaves with no row it can see. Each statement appends its rows, so a commit written in
// many statements (a large import) stages in time linear in its rows; a transaction-local setting
// held them before, read back whole and written again by every statement (quadratic). Sent to
// Node and back, they were most of a commit's rows to parse and its largest parameters (a dozen
// rows per message appended).

/** The staged rows (`pg_temp`: never a table of the schema by that name). */
const STAGED = 'pg_temp.colloquy_term_deltas'

/**
 * Begins a commit's transaction with the table of staged rows there: made inside the
 * transaction (if the connection lacks it), in the same round trip as BEGIN. Inside, because a
 * connection is not a session behind a transaction-mode pooler (PgBouncer, a host's pooled port):
 * a table made before BEGIN may be on another server connection than the commit. A rolled-back
 * transaction takes a table it made with it, and the next commit makes it again.
 */
export async function beginStaging(client: pg.ClientBase): Promise<void> {
  await client.query(
    `BEGIN; CREATE TEMP TABLE IF NOT EXISTS colloquy_term_deltas (owner text, term text COLLATE "C" NOT NULL, df bigint NOT NULL, tf int) ON COMMIT DELETE ROWS`,
  )
}

/**
 * A statement (or a common table expression's body) that adds the term rows (`termRowsSql`) of a
 * relation `docs(owner, terms, sign)` to the transaction's staged rows.
 */
export const stageTermRowsSql = (docs: string): string =>
  `INSERT INTO ${STAGED} (owner, term, df, tf) ${termRowsSql(docs)}`

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
 *
 * The deletes find their rows by the key, `(owner, term)`, in one index probe each: one for the
 * owners and one for the rows without one, as `IS NOT DISTINCT FROM` (which no index serves) made
 * the planner scan the whole table for any commit that removed a term.
 */
export const termCountsSql = (after?: string): string =>
  `tc AS (SELECT u.owner, u.term, sum(u.df)::bigint AS df, coalesce(max(u.tf), 0)::int AS tf
       FROM ${STAGED} u${after ? `, ${after}` : ''}
       GROUP BY u.owner, u.term HAVING sum(u.df) <> 0 OR max(u.tf) > 0),
  tc_owned AS (DELETE FROM colloquy_terms t USING tc
       WHERE tc.df < 0 AND t.owner = tc.owner AND t.term = tc.term AND t.df + tc.df <= 0
       RETURNING t.owner, t.term),
  tc_unowned AS (DELETE FROM colloquy_terms t USING tc
       WHERE tc.df < 0 AND tc.owner IS NULL AND t.owner IS NULL AND t.term = tc.term AND t.df + tc.df <= 0
       RETURNING t.owner, t.term),
  tc_kept AS (INSERT INTO colloquy_terms AS t (owner, term, df, tf_max)
       SELECT owner, term, df, tf FROM tc
         WHERE NOT EXISTS (SELECT 1 FROM (SELECT * FROM tc_owned UNION ALL SELECT * FROM tc_unowned) g
           WHERE g.owner IS NOT DISTINCT FROM tc.owner AND g.term = tc.term)
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
