/**
 * A field of a `json` column read in SQL, the one way the server's statements read into stored
 * JSON. Content columns are `json` (text kept as sent), and PostgreSQL's `->>` unescapes the whole
 * text it reads from, failing on any `\u` escape it cannot turn into text: a NUL (u0000), a lone
 * surrogate (a status reason or a title cut in the middle of an emoji), a code point the
 * database's encoding lacks. Such a failure anywhere in the text, not only in the field read,
 * turned a plain `meta->>'status'` into a storage failure for every list, search or index write
 * over that session. So every `\u` escape is dropped first, and with it every escaped backslash
 * (matched left to right, so an escaped backslash followed by the letters u0000 is taken as the
 * backslash and leaves the letters); what is left is JSON with the same structure and keys.
 *
 * Only for fields whose values hold no escape (numbers, and the enums core validates: status,
 * kind): a text (a title) is read whole (`column` itself) and parsed in Node.
 * `test/postgres/json-field.test.ts` checks that no other `->>` or `->` is in the server's SQL,
 * and that every hostile escape passes every statement that reads a meta.
 */
export const jsonFieldSql = (column: string, field: string): string =>
  `(regexp_replace(${column}::text, '\\\\(\\\\|u[0-9a-fA-F]{4})', '', 'g')::json->>'${field}')`
