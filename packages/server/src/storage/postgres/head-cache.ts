import type { AttachmentMeta, SessionHead } from '@colloquy/core'
import { createHash } from 'node:crypto'
import { headOf } from './codec.js'

/** A head row as read under a commit's lock: its meta and attachments as the JSON text stored. */
export interface HeadTextRow {
  id: string
  meta: string
  leaf: string | null
  v: string | number
  attachments: string | null
}

/**
 * A head row as the commit's lock reads it first: the digests (`digestOf`) of its meta and
 * attachments texts rather than the texts, which are read only for the rows `HeadCache` does
 * not know.
 */
export interface HeadDigestRow {
  id: string
  meta: string
  leaf: string | null
  v: string | number
  attachments: string | null
}

/**
 * The digest of a stored JSON text, as the lock's statement computes it in the database
 * (`encode(sha256(convert_to(text, 'UTF8')), 'hex')`): SHA-256, so two different texts never
 * share one, whoever wrote them.
 */
export const digestOf = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

/** The SQL of `digestOf` over a `json` expression (null stays null). */
export const digestSql = (json: string): string => `encode(sha256(convert_to(${json}::text, 'UTF8')), 'hex')`

/**
 * The texts of heads read by id (`= ANY`), for those `HeadCache` does not know: what a commit
 * reads of the rows it holds locked, and a page of the rows it has not parsed.
 */
export const HEAD_TEXTS =
  'SELECT id, meta::text AS meta, leaf, v, attachments::text AS attachments FROM colloquy_sessions WHERE id = ANY($1::text[])'

/** Heads whose texts one statement reads: their rows reach the driver in pieces of a few hundred kilobytes. */
export const TEXTS_PER_READ = 100

interface Known {
  readonly meta: string
  readonly attachments: string | null
  readonly leaf: string | null
  readonly v: string
  readonly head: SessionHead
}

/**
 * The heads a commit reads under its lock, parsed once per stored text. A row whose meta and
 * attachments texts (by digest), leaf and version are those of the head read (or written) last
 * for its session is that same head object, not a new parse of it: heads are frozen, and one
 * parsed from the same text is equal to it in every field, so this is a memo of the parse,
 * whoever wrote the row (another instance included). It spares the parse, and the texts
 * themselves: the lock reads digests, and the texts only of the rows not known here (a push
 * touching a thousand sessions whose metadata holds large arrays read megabytes of them back,
 * which the driver turned into strings in a few long turns of the event loop). It also lets the
 * engine's check that the head it holds is still the one on disk find the very object it holds
 * (`held === disk`) instead of comparing every meta field by field. (The `json` columns keep
 * text as written, so the text read back is the text written.)
 */
export class HeadCache {
  private readonly known = new Map<string, Known>()

  constructor(
    /** Sessions remembered at most (the least recently used are forgotten past it). */
    private readonly max = 100_000,
  ) {}

  /** The remembered head of a row read by digest, or undefined: read its texts (`read`). */
  match(r: HeadDigestRow): SessionHead | undefined {
    const k = this.known.get(r.id)
    if (
      !k ||
      k.meta !== r.meta ||
      k.attachments !== r.attachments ||
      k.leaf !== r.leaf ||
      k.v !== String(r.v)
    )
      return undefined
    // Most recently used last (Map order), so the oldest go first past `max`.
    this.known.delete(r.id)
    this.known.set(r.id, k)
    return k.head
  }

  /** The head of a row read with its texts, parsed, and remembered by their digests. */
  read(r: HeadTextRow): SessionHead {
    const v = String(r.v)
    const head = headOf({
      id: r.id,
      meta: JSON.parse(r.meta) as SessionHead['meta'],
      leaf: r.leaf,
      v,
      attachments: r.attachments === null ? null : (JSON.parse(r.attachments) as AttachmentMeta[]),
    })
    this.remember(r.id, {
      meta: digestOf(r.meta),
      attachments: r.attachments === null ? null : digestOf(r.attachments),
      leaf: r.leaf,
      v,
      head,
    })
    return head
  }

  /**
   * A head written by this instance, with the digests of the texts its row was given (`leaf` as
   * stored): the next commit reading that row back gets this object, the one its engine holds.
   */
  wrote(id: string, head: SessionHead, meta: string, attachments: string | null, leaf: string | null): void {
    this.remember(id, { meta, attachments, leaf, v: String(head.v), head })
  }

  forget(id: string): void {
    this.known.delete(id)
  }

  private remember(id: string, k: Known): void {
    this.known.delete(id)
    this.known.set(id, k)
    if (this.known.size > this.max) this.known.delete(this.known.keys().next().value!)
  }
}
