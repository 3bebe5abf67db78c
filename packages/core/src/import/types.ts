// What importers hand the store: a whole session, its attachments, and how to write it.
import type { SessionEntry, SessionMeta } from '../model/model.js'

/** A whole session as importers and bulk loaders produce it. */
export interface SessionImport {
  meta: SessionMeta
  entries: SessionEntry[]
  active_leaf: string | null
  /**
   * Attachments the entries reference (images and files an importer found), stored with the
   * session: they appear together, so no entry ever points at bytes that are not there.
   */
  attachments?: readonly ImportAttachment[]
}

/** An attachment of an imported session: its id as the entries name it, and its bytes. */
export interface ImportAttachment {
  attachment_id: string
  name: string
  mime: string
  bytes: Blob | Uint8Array
  created_at?: number
}

export interface ImportOptions {
  /** Called after each chunk is on disk with entries written so far and the total. */
  onProgress?: (written: number, total: number) => void
  /** Entries per transaction; default 2000. */
  chunkSize?: number
}
