import type { SessionEntry, SessionMeta } from '@colloquy/core'
import { entryText, termCounts } from '@colloquy/core/search'
import { isSealedRecord } from '@colloquy/core/wire'

// What PostgreSQL's full text holds of a document (a message entry or a session's title): the
// terms of core's own tokenizer (folded, CJK cut into pairs), so the database matches exactly
// the words a device's index matches, with nothing of PostgreSQL's parsers, dictionaries or
// extensions (`unaccent`, `pg_trgm`) in between.

/**
 * A `tsvector` position is at most 16,383: a term's position list holds its count there (capped
 * at that; core's index caps at 65,535, where BM25 has long saturated), not where it occurs.
 * Phrases are checked on the text, as core checks them.
 */
export const MAX_TF = 16_383
/**
 * A `tsvector`'s lexemes, each followed by its positions (a count and one position, aligned: at
 * most 6 bytes more), must fit in 1 MiB: past this, a document's further distinct terms (in order
 * of first occurrence) are left out of it, so no message is ever refused for its size.
 */
const MAX_LEXEME_BYTES = 1_000_000
const POSITION_BYTES = 6

/** A term as a `tsvector`/`tsquery` literal's lexeme: quoted, `'` doubled, `\` escaped. */
export const lexeme = (term: string): string => `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`

/** The `tsvector` literal of a document's terms counted (core's `termCounts`, in first-occurrence order). */
function tsvectorOf(counts: ReadonlyMap<string, number>): string {
  const out: string[] = []
  let bytes = 0
  for (const [term, n] of counts) {
    bytes += Buffer.byteLength(term) + POSITION_BYTES
    if (bytes > MAX_LEXEME_BYTES) break
    out.push(`${lexeme(term)}:${Math.min(n, MAX_TF)}`)
  }
  return out.join(' ')
}

/** A text's document: its `tsvector` literal and how many terms it holds (BM25's length). */
function docOf(text: string): { terms: string; len: number } {
  const counts = new Map<string, number>()
  const len = termCounts(text, counts)
  return { terms: tsvectorOf(counts), len }
}

/** What an entry's row holds for search besides its terms (`doc`), as the commit writes it. */
export interface EntryDoc {
  /** The `tsvector` literal; null when the entry is not searchable (a custom entry, a sealed one). */
  readonly terms: string | null
  /** Its terms counted (BM25's document length); null when not searchable. */
  readonly len: number | null
  readonly role: string | null
  readonly ts: number
  /** The parent's id (as stored: `toDb`), which the active path walks. */
  readonly parent: string | null
}

/**
 * An entry's searchable document, from the text core's index reads (`entryText`: text blocks,
 * tool calls' names and arguments, tool results, file names; thinking not). A sealed entry
 * (an end-to-end encrypted session's) has none: the server holds only its ciphertext.
 */
export function entryDoc(entry: SessionEntry, parent: string | null): EntryDoc {
  const sealed = isSealedRecord(entry)
  const text = sealed ? null : entryText(entry, { thinking: false })
  const ts = entry.kind === 'message' && !sealed ? entry.message.timestamp : entry.timestamp
  if (text === null || entry.kind !== 'message') return { terms: null, len: null, role: null, ts, parent }
  return { ...docOf(text), role: entry.message.role, ts, parent }
}

/** A session's title as a document (null: no title, or a sealed one). */
export function titleDoc(meta: SessionMeta): { terms: string; len: number } | null {
  if (isSealedRecord(meta) || typeof meta.title !== 'string' || !meta.title) return null
  return docOf(meta.title)
}
