import type { SessionEntry } from '../model/model.js'

/** An empty list of entries, shared. */
export const NO_ENTRIES: readonly SessionEntry[] = Object.freeze([])

/**
 * What a write that reads no entry's content reads (`OperationSpec.reads`): an append, a branch
 * switch, a parent check, an attachment's in-use check decide from ids, parents and the
 * attachments each entry references, which an encrypted store holds clear, so it opens nothing
 * for them. Its own module: the attachments' chunk names it without fetching the code that appends.
 */
export const readsNoContent = (): readonly SessionEntry[] => NO_ENTRIES
