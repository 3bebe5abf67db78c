import type pg from 'pg'
import { backfillFullText } from './full-text-backfill.js'
import { jsonFieldSql } from './json-field.js'

/**
 * A sort key of a session's meta (`updated_at` or `created_at`), as pages.ts orders by it and the
 * indexes of migration 5 hold it: the same text in both, or the planner does not use them (so a
 * change here, or in `jsonFieldSql`, is a new migration, as 8 was). Read through `jsonFieldSql`:
 * the number is the same, and a write of a meta holding any escape never fails on the index (nor
 * the migration on a database holding one).
 */
export const sortKeySql = (field: 'updated_at' | 'created_at'): string =>
  `${jsonFieldSql('meta', field)}::float8`

/**
 * The schema, as numbered migrations. Each runs once, in its own transaction, recorded in
 * `colloquy_migrations`; instances starting at once take turns on an advisory lock, so the
 * second finds the work done.
 *
 * - `colloquy_sessions`: one row per session, its head (meta, leaf, version `v`) and `bytes`
 *   (what it stores, for quotas); the row lock taken by a commit serializes its writes.
 * - `colloquy_entries`: one row per entry, its current version (`pos` keeps first-write order).
 * - `colloquy_changes`: the change log, one record per key (as `change-index.ts` describes),
 *   `seq` taken from the clock row inside the commit, so sequence order is commit order.
 * - `colloquy_events`: the events each commit fired, under its last `seq` and the instance that
 *   committed it, so that other instances fire them on their `/events` sockets too; kept for
 *   minutes (only live sockets need them).
 * - `colloquy_attachment_chunks`: attachment bytes, one row per fixed-size chunk, keyed by
 *   session and sha256 (the same content is stored once per session), written and removed in
 *   the transaction of the commit that lists or unlists them.
 * - `colloquy_lock_heads(ids)`: a commit's first statement (see the migration).
 * - `colloquy_clock`: one row: the newest `seq` (`head`), the oldest usable cursor (`floor`)
 *   and the database's `epoch` (a new one for every database, so a cursor from another one,
 *   a restore or a re-creation, is recognised).
 * - Full text (`search/postgres-search.ts`): an entry's `terms` (a GIN-indexed `tsvector` of core's
 *   tokens), `len`, `role`, `ts` and `parent`; a session's `title_terms`, `title_len`, and its
 *   entries' `search_docs` and `search_len` summed (BM25's statistics); `colloquy_terms`, each
 *   owner's terms and how many documents hold each.
 * Content columns are `json`, not `jsonb`: `json` keeps text as sent (including `\u0000`).
 */
/**
 * What `colloquy_terms` holds, counted from the documents themselves (every session's entries'
 * and title's terms, by the session's owner): what the migration fills it with, and what a
 * test or a loader checks the counts the commits keep against.
 */
export const TERM_COUNTS_OF_ROWS = `SELECT owner, term, count(*) AS df, max(tf)::int AS tf_max FROM (
       SELECT s.owner, u.lexeme AS term, u.positions[1] AS tf FROM colloquy_sessions s JOIN colloquy_entries e ON e.session_id = s.id, unnest(e.terms) u
       UNION ALL SELECT s.owner, u.lexeme, u.positions[1] FROM colloquy_sessions s, unnest(s.title_terms) u) x
     GROUP BY owner, term`

// Each principal's terms with the number of documents (entries and titles) holding them
// (`search/term-counts.ts`): a search reads a term's count in one index probe, and a prefix's
// words in one range of the owner's vocabulary (`term` in byte order, "C"), where it counted
// documents up to a bound before (so a word in most messages had a guessed idf). Keys are
// (owner, term) with one NULL owner (sessions without one); the `term` index serves searches
// with tenancy off (every owner's counts summed). Filled here from the terms migration 6 stores.
// `tf_max` and `colloquy_entries_rank` serve a top-k read when a query's candidates are more than
// a statement reads: entries shortest first (a term's weight falls as the document grows), newest
// first among equals, until no unread one can rank in the page (`postgres-search.ts`).
const TERM_COUNTS = `CREATE TABLE colloquy_terms (
     owner text,
     term text COLLATE "C" NOT NULL,
     df bigint NOT NULL,
     tf_max int NOT NULL,
     CONSTRAINT colloquy_terms_key UNIQUE NULLS NOT DISTINCT (owner, term)
   );
   INSERT INTO colloquy_terms (owner, term, df, tf_max) ${TERM_COUNTS_OF_ROWS};
   CREATE INDEX colloquy_terms_term ON colloquy_terms (term);
   CREATE INDEX colloquy_entries_rank ON colloquy_entries (len, (-ts), session_id, id) WHERE len IS NOT NULL AND ts IS NOT NULL;`

// The indexes pages.ts reads sessions in order from (see migration 5, and 8, which rebuilt them
// when `jsonFieldSql` changed). Migration 5 builds them with the expression of today too, so an old
// database holding a meta the expression of then could not read still migrates.
const SORT_KEY_INDEXES = `CREATE INDEX colloquy_sessions_owner_updated ON colloquy_sessions (owner, (${sortKeySql('updated_at')}));
   CREATE INDEX colloquy_sessions_owner_created ON colloquy_sessions (owner, (${sortKeySql('created_at')}));
   CREATE INDEX colloquy_sessions_updated ON colloquy_sessions ((${sortKeySql('updated_at')}));
   CREATE INDEX colloquy_sessions_created ON colloquy_sessions ((${sortKeySql('created_at')}));`

// The sort-key indexes again, over `jsonFieldSql` as it now reads (every `\u` escape dropped,
// where it dropped NUL escapes only): a meta holding a lone surrogate failed the old expression,
// so its every write was a storage failure. A database built before has the old expressions,
// which pages.ts's statements no longer match.
const SORT_KEYS_REBUILD = `DROP INDEX colloquy_sessions_owner_updated, colloquy_sessions_owner_created, colloquy_sessions_updated, colloquy_sessions_created;
   ${SORT_KEY_INDEXES}`

/** A migration: statements, or work of its own on the migration's connection (inside its transaction). */
type Migration = string | ((client: pg.ClientBase) => Promise<void>)

const MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE colloquy_sessions (
     id text PRIMARY KEY,
     owner text,
     meta json NOT NULL,
     leaf text,
     v bigint NOT NULL
   );
   CREATE TABLE colloquy_entries (
     session_id text NOT NULL,
     id text NOT NULL,
     pos bigserial,
     entry json NOT NULL,
     PRIMARY KEY (session_id, id)
   );
   CREATE INDEX colloquy_entries_pos ON colloquy_entries (session_id, pos);
   CREATE TABLE colloquy_changes (
     key text PRIMARY KEY,
     seq bigint NOT NULL UNIQUE,
     kind text NOT NULL,
     session_id text NOT NULL,
     entry_id text,
     owner text,
     metadata json
   );
   CREATE INDEX colloquy_changes_session ON colloquy_changes (session_id);
   CREATE INDEX colloquy_changes_owner ON colloquy_changes (owner, seq);
   CREATE TABLE colloquy_clock (
     id int PRIMARY KEY CHECK (id = 1),
     head bigint NOT NULL,
     floor bigint NOT NULL,
     epoch text NOT NULL
   );
   INSERT INTO colloquy_clock VALUES (1, 0, 0, gen_random_uuid()::text);
   CREATE SEQUENCE colloquy_side_key;
   CREATE TABLE colloquy_side (
     store text NOT NULL,
     key text NOT NULL,
     value json NOT NULL,
     PRIMARY KEY (store, key)
   );`,
  // Per-principal quotas read what each session stores (the JSON of its meta and entries), kept
  // in the row by every commit so that no count sums a long session again.
  `ALTER TABLE colloquy_sessions ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
   UPDATE colloquy_sessions s SET bytes = octet_length(s.meta::text)
     + coalesce((SELECT sum(octet_length(e.entry::text)) FROM colloquy_entries e WHERE e.session_id = s.id), 0);
   CREATE INDEX colloquy_sessions_owner ON colloquy_sessions (owner);
   CREATE TABLE colloquy_events (
     seq bigint PRIMARY KEY,
     origin text NOT NULL,
     at timestamptz NOT NULL DEFAULT now(),
     events json NOT NULL
   );`,
  // Attachments: each session's list (metadata) with its head, one change-log record per
  // attachment, and the bytes in fixed-size chunks per session and sha256 (see attachment-chunks.ts).
  // Chunks are stored uncompressed and out of line: attachments are mostly compressed already.
  `ALTER TABLE colloquy_sessions ADD COLUMN attachments json;
   ALTER TABLE colloquy_changes ADD COLUMN attachment_id text;
   CREATE TABLE colloquy_attachment_chunks (
     session_id text NOT NULL,
     sha256 text NOT NULL,
     n int NOT NULL,
     data bytea NOT NULL,
     PRIMARY KEY (session_id, sha256, n)
   );
   ALTER TABLE colloquy_attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;`,
  // A commit locks the sessions it touches and reads their heads in one round trip. The
  // advisory locks (sorted: two commits never wait on each other in a cycle; they also cover ids
  // not created yet) come first; the heads are read after them with a snapshot of their own (a
  // VOLATILE function takes one per statement), so a session another instance created while
  // this one waited is seen.
  `CREATE FUNCTION colloquy_lock_heads(ids text[]) RETURNS TABLE (sid text, smeta json, sleaf text, sv bigint, sattachments json)
     LANGUAGE plpgsql VOLATILE AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(x, 0) AS k FROM unnest(ids) AS x ORDER BY 1) l;
     RETURN QUERY SELECT s.id, s.meta, s.leaf, s.v, s.attachments FROM colloquy_sessions s WHERE s.id = ANY(ids) ORDER BY s.id FOR UPDATE;
   END $$;`,
  // A page of sessions (pages.ts) is read in the order of a sort key in the meta, one owner's
  // (tenancy) or everyone's: these indexes hold those very expressions (`sortKeySql`), so a page
  // reads its rows in order from an index, where it sorted the whole table (or the whole owner)
  // before (hundreds of milliseconds at 100,000 sessions). Built once, as the migration runs.
  SORT_KEY_INDEXES,
  // Full text (`session::search`, packages/server/src/search/postgres-search.ts): each entry's
  // terms as core's tokenizer cuts and folds them (a `tsvector`, GIN-indexed), its length, role,
  // timestamp and parent (what ranking, filters and the active path read without parsing the
  // entry); each session's title likewise, and its searchable documents and their lengths summed
  // (BM25's statistics of a principal are a sum over their sessions). Written by every commit;
  // existing rows are filled here, by core's tokenizer (hence code, not SQL).
  backfillFullText,
  TERM_COUNTS,
  SORT_KEYS_REBUILD,
]

/** The version that brought full text (an upgrade test starts from the one before). */
export const FULL_TEXT_VERSION = MIGRATIONS.indexOf(backfillFullText) + 1
/** The version that brought the term counts (an upgrade test starts from the one before). */
export const TERM_COUNTS_VERSION = MIGRATIONS.indexOf(TERM_COUNTS) + 1
/** The version that rebuilt the sort-key indexes over today's `jsonFieldSql` (an upgrade test starts from the one before). */
export const SORT_KEYS_REBUILT = MIGRATIONS.indexOf(SORT_KEYS_REBUILD) + 1

/** An arbitrary constant: the advisory lock migrations run under. */
const MIGRATION_LOCK = 0x636f6c6c

/**
 * Brings the schema up to date (or to version `upTo`: a database as an older release left it,
 * for the tests of the migrations after it); safe to run from several instances at once.
 */
export async function migrate(pool: pg.Pool, upTo = MIGRATIONS.length): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS colloquy_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      )
      const done =
        (await client.query<{ v: number | null }>('SELECT max(version) AS v FROM colloquy_migrations'))
          .rows[0].v ?? 0
      for (let v = done + 1; v <= Math.min(upTo, MIGRATIONS.length); v++) {
        await client.query('BEGIN')
        try {
          const m = MIGRATIONS[v - 1]
          if (typeof m === 'string') await client.query(m)
          else await m(client)
          await client.query('INSERT INTO colloquy_migrations (version) VALUES ($1)', [v])
          await client.query('COMMIT')
        } catch (e) {
          await client.query('ROLLBACK')
          throw e
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    client.release()
  }
}
