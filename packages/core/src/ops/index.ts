import type { OpContext } from '../context.js'
import type { Draft } from '../draft.js'
import type { FunctionId, FunctionMap } from '../model.js'
import { append, appendMany, fork, setActiveLeaf, updateMessage } from './entries.js'
import { create, ensure, remove, setMeta, setStatus } from './lifecycle.js'
import { get, getMessage, list, messages } from './reads.js'
import { deleteAttachment, getAttachment, listAttachments, putAttachment, setDraft, type PreparedAttachment } from './attachments.js'
import { mentionGet, mentionSearch } from './mention.js'
import { messagesRange, messagesTail } from './tail.js'

export interface OpSpec<K extends FunctionId> {
  run(d: Draft, req: FunctionMap[K][0], ctx: OpContext): FunctionMap[K][1]
  /** Reads take no transaction; they still run in issue order with the writes around them. */
  write: boolean
  /** Whether the operation needs the session's entries in memory. */
  entries: boolean
}

const w = true
const r = false

/** The domain service: one implementation of every rule, whatever the storage or transport. */
export const operations: { [K in FunctionId]: OpSpec<K> } = {
  'session::create': { run: create, write: w, entries: false },
  'session::ensure': { run: ensure, write: w, entries: false },
  'session::get': { run: get, write: r, entries: false },
  'session::list': { run: list, write: r, entries: false },
  'session::delete': { run: remove, write: w, entries: false },
  'session::set-meta': { run: setMeta, write: w, entries: false },
  'session::set-status': { run: setStatus, write: w, entries: false },
  'session::append': { run: append, write: w, entries: true },
  'session::append-many': { run: appendMany, write: w, entries: true },
  'session::get-message': { run: getMessage, write: r, entries: true },
  'session::messages': { run: messages, write: r, entries: true },
  'session::update-message': { run: updateMessage, write: w, entries: true },
  'session::set-active-leaf': { run: setActiveLeaf, write: w, entries: true },
  'session::fork': { run: fork, write: w, entries: true },
  'session::set-draft': { run: setDraft, write: w, entries: false },
  // The store hands this one a prepared request (bytes checked and hashed before the batch).
  'session::put-attachment': { run: putAttachment as unknown as OpSpec<'session::put-attachment'>['run'], write: w, entries: false },
  'session::get-attachment': { run: getAttachment, write: r, entries: false },
  'session::list-attachments': { run: listAttachments, write: r, entries: false },
  // The in-use refusal scans every branch's entries.
  'session::delete-attachment': { run: deleteAttachment, write: w, entries: true },
  'session::messages-tail': { run: messagesTail, write: r, entries: true },
  'session::messages-range': { run: messagesRange, write: r, entries: true },
  'session::mention::search': { run: mentionSearch, write: r, entries: false },
  'session::mention::get': { run: mentionGet, write: r, entries: false },
}

export type { PreparedAttachment }
