/**
 * A field of a `json` column read in SQL, the one way the server's statements read into stored
 * JSON. Content columns are `json` (text kept as sent, NUL escapes included), and PostgreSQL's
 * `->>` fails on a `json` text holding a NUL escape (u0000 after a backslash) anywhere in it, not
 * only in the field read: a plain `meta->>'status'` turns a list, a search or an index write into
 * a storage failure for every session whose title or description holds one. So such escapes are
 * dropped first, each escaped backslash (two backslashes) written as its u005c escape before, so
 * that an escaped backslash followed by the letters u0000 stays.
 *
 * Only for fields whose values hold no NUL (numbers, and the enums core validates: status, kind):
 * a text that could hold one (a title) is read whole (`column` itself) and parsed in Node.
 * `test/postgres/json-field.test.ts` checks that no other `->>` or `->` is in the server's SQL.
 */
export const jsonFieldSql = (column: string, field: string): string =>
  `(replace(replace(${column}::text, '\\\\', '\\u005c'), '\\u0000', '')::json->>'${field}')`
