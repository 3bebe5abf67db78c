import type { AttachmentMeta, JsonObject, SessionHead, SessionMeta } from '@colloquy/core'

// PostgreSQL `text` cannot hold U+0000, and ids are chosen by callers: a reversible escape
// (`\` → `\\`, NUL → `\0`) keeps every id storable and distinct.
/* eslint-disable no-control-regex -- NUL is the character PostgreSQL text cannot hold */
const NEEDS = /[\\\u0000]/

export const toDb = (id: string): string =>
  NEEDS.test(id) ? id.replace(/\\/g, '\\\\').replace(/\u0000/g, '\\0') : id
/* eslint-enable no-control-regex */

export const fromDb = (text: string): string =>
  text.includes('\\') ? text.replace(/\\(\\|0)/g, (_m, c: string) => (c === '0' ? '\u0000' : '\\')) : text

/** The tenancy owner a session's rows are filed under (`metadata.owner`, as `Tenancy` reads it). */
export const ownerOf = (metadata: JsonObject | undefined): string | null => {
  const o = metadata?.owner
  return typeof o === 'string' ? o : null
}

export interface HeadRow {
  id: string
  meta: SessionMeta
  leaf: string | null
  v: string | number
  /** The session's attachments (metadata), null when it has none. */
  attachments?: AttachmentMeta[] | null
}

export const headOf = (r: HeadRow): SessionHead =>
  Object.freeze({
    meta: Object.freeze(r.meta),
    leaf: r.leaf === null ? null : fromDb(r.leaf),
    v: Number(r.v),
    ...(r.attachments?.length && { attachments: Object.freeze(r.attachments.map((a) => Object.freeze(a))) }),
  })

/** What a head stores in its `attachments` column (null for none). */
export const attachmentsOf = (head: SessionHead): string | null =>
  head.attachments?.length ? JSON.stringify(head.attachments) : null

/** The bytes a head's attachments count for (each attachment its size, as `Usage` counts them). */
export const attachmentBytesOf = (head: SessionHead | undefined): number =>
  (head?.attachments ?? []).reduce((sum, a) => sum + a.size, 0)
