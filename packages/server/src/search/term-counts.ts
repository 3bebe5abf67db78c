import type pg from 'pg'

// Each principal's vocabulary with its document counts (`colloquy_terms`, migration 7): what a
// search reads for a term's idf and a prefix's words, in one index probe or one range, where it
// counted the term's documents (bounded, so a common word's count was a guess) before. Kept
// exact by every commit: each statement that writes or deletes documents returns what it added
// and removed per (owner, term), and the commit applies the sum once, just before its change-log
// statement. With each count, `tf_max`: at least the most times one document holds the term
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
   * Writes the counts in one statement, in (owner, term) order: two commits lock the rows they
   * share in the same order, so they wait for each other without a cycle. A term no document of
   * the owner holds any more is removed (a prefix never expands to it).
   */
  async apply(client: pg.ClientBase): Promise<void> {
    const rows = [...this.byKey.values()].filter((r) => r.df !== 0 || r.tf > 0)
    this.byKey.clear()
    if (!rows.length) return
    const gone = (
      await client.query<TermRow>(
        `INSERT INTO colloquy_terms AS t (owner, term, df, tf_max)
           SELECT owner, term, df, tf FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[]) AS u(owner, term, df, tf)
           ORDER BY owner COLLATE "C" NULLS FIRST, term
         ON CONFLICT (owner, term) DO UPDATE SET df = t.df + EXCLUDED.df, tf_max = greatest(t.tf_max, EXCLUDED.tf_max)
         RETURNING owner, term, df`,
        [rows.map((r) => r.owner), rows.map((r) => r.term), rows.map((r) => r.df), rows.map((r) => r.tf)],
      )
    ).rows.filter((r) => Number(r.df) <= 0)
    if (gone.length)
      await client.query(
        `DELETE FROM colloquy_terms t USING unnest($1::text[], $2::text[]) AS u(owner, term)
           WHERE t.owner IS NOT DISTINCT FROM u.owner AND t.term = u.term AND t.df <= 0`,
        [gone.map((r) => r.owner), gone.map((r) => r.term)],
      )
  }
}

/**
 * The terms of some documents as `(owner, term, df, tf)` rows, from a relation `docs(owner,
 * terms, sign)` (sign: +1 added, -1 removed): each distinct term of each `tsvector` once per
 * document; `tf` the most times an added document holds it (a `tsvector` position here is a
 * count, `search-doc.ts`).
 */
export const termRowsSql = (docs: string): string =>
  `SELECT d.owner, u.lexeme AS term, sum(d.sign)::bigint AS df, max(u.positions[1]) FILTER (WHERE d.sign > 0)::int AS tf
     FROM ${docs} d, unnest(d.terms) u GROUP BY d.owner, u.lexeme HAVING sum(d.sign) <> 0 OR bool_or(d.sign > 0)`
