import type pg from 'pg'

// Each principal's vocabulary with its document counts (`colloquy_terms`, migration 7): what a
// search reads for a term's idf and a prefix's words, in one index probe or one range, where it
// counted the term's documents (bounded, so a common word's count was a guess) before. Kept
// exact by every commit: each statement that writes or deletes documents returns what it added
// and removed per (owner, term), and the commit applies the sum once, inside its change-log
// statement (no round trip of its own). With each count, `tf_max`: at least the most times one document holds the term
// (raised by additions, never lowered), which bounds the term's BM25 weight for a top-k read.

/** A row of `termRowsSql`: documents holding `term` added (negative: removed) for `owner`. */
export interface TermRow {
  readonly owner: string | null
  readonly term: string
  /** int8: a string from the driver. */
  readonly df: number | string
  /** The most times an added document holds the term (null: none added). */
  readonly tf: number | null
}

/** A commit's changes to the counts, by owner and term. */
export class TermDeltas {
  private readonly byKey = new Map<string, { owner: string | null; term: string; df: number; tf: number }>()

  /** Adds rows of `{ owner, term, df }` (df: documents added, negative for removed). */
  add(rows: Iterable<TermRow>): void {
    for (const r of rows) {
      const key = JSON.stringify([r.owner, r.term])
      const had = this.byKey.get(key)
      if (had) {
        had.df += Number(r.df)
        had.tf = Math.max(had.tf, r.tf ?? 0)
      } else this.byKey.set(key, { owner: r.owner, term: r.term, df: Number(r.df), tf: r.tf ?? 0 })
    }
  }

  /**
   * The counts to write, as the four array parameters of `termCountsSql` (owner, term, df, tf),
   * and forgotten here. None when nothing changes.
   */
  take(): [Array<string | null>, string[], number[], number[]] | undefined {
    const rows = [...this.byKey.values()].filter((r) => r.df !== 0 || r.tf > 0)
    this.byKey.clear()
    if (!rows.length) return undefined
    return [rows.map((r) => r.owner), rows.map((r) => r.term), rows.map((r) => r.df), rows.map((r) => r.tf)]
  }

  /**
   * Writes the counts in a statement of their own: for a commit that writes no change-log
   * statement (which otherwise carries them, `termCountsSql`). It takes the clock row's lock
   * first all the same, as that statement does.
   */
  async apply(client: pg.ClientBase): Promise<void> {
    const params = this.take()
    if (params)
      await client.query(
        `WITH clock AS (SELECT head FROM colloquy_clock WHERE id = 1 FOR UPDATE), ${termCountsSql([1, 2, 3, 4], 'clock')} SELECT 1`,
        params,
      )
  }
}

/**
 * The common table expressions that apply a commit's counts (parameters `$p[0]`…`$p[3]`: owner,
 * term, df, tf arrays), to stand beside others in one statement: a term whose count falls to
 * zero is deleted (a prefix never expands to it), the others are added to, in (owner, term)
 * order. The two never touch the same row, as a statement's parts must not. `after`: a relation
 * the rows are joined to (one row), so the counts are written only once it is read: the change
 * log's clock row, whose lock orders commits, so two commits never wait on each other's term
 * rows in a cycle and each reads the counts the one before it left (an update's re-check reads
 * the newest row).
 */
export const termCountsSql = (p: readonly [number, number, number, number], after?: string): string =>
  `tc AS (SELECT u.owner, u.term, u.df, u.tf
       FROM unnest($${p[0]}::text[], $${p[1]}::text[], $${p[2]}::bigint[], $${p[3]}::int[]) AS u(owner, term, df, tf)${after ? `, ${after}` : ''}),
  tc_gone AS (DELETE FROM colloquy_terms t USING tc
       WHERE tc.df < 0 AND t.owner IS NOT DISTINCT FROM tc.owner AND t.term = tc.term AND t.df + tc.df <= 0
       RETURNING t.owner, t.term),
  tc_kept AS (INSERT INTO colloquy_terms AS t (owner, term, df, tf_max)
       SELECT owner, term, df, tf FROM tc
         WHERE NOT EXISTS (SELECT 1 FROM tc_gone g WHERE g.owner IS NOT DISTINCT FROM tc.owner AND g.term = tc.term)
         ORDER BY owner COLLATE "C" NULLS FIRST, term
       ON CONFLICT (owner, term) DO UPDATE SET df = t.df + EXCLUDED.df, tf_max = greatest(t.tf_max, EXCLUDED.tf_max))`

/**
 * The terms of some documents as `(owner, term, df, tf)` rows, from a relation `docs(owner,
 * terms, sign)` (sign: +1 added, -1 removed): each distinct term of each `tsvector` once per
 * document; `tf` the most times an added document holds it (a `tsvector` position here is a
 * count, `search-doc.ts`).
 */
export const termRowsSql = (docs: string): string =>
  `SELECT d.owner, u.lexeme AS term, sum(d.sign)::bigint AS df, max(u.positions[1]) FILTER (WHERE d.sign > 0)::int AS tf
     FROM ${docs} d, unnest(d.terms) u GROUP BY d.owner, u.lexeme HAVING sum(d.sign) <> 0 OR bool_or(d.sign > 0)`
