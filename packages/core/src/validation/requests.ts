import { LIMITS, checkBoundedString } from './limits.js'
import { KINDS, ORDERS, ROLES, STATUSES, STOP_REASONS } from '../model/model.js'
import { array, id, json, jsonObject, oneOf, str } from './validate.js'
import { blob, bool, name, object, opt, parseWith, req, uint } from './record-parsers.js'
import { agentMessage, blocks, customPayload, usage } from './schemas.js'
import type { FunctionId, FunctionMap } from '../model/model.js'
import type { Parser } from './validate.js'

// Every function's request schema, fetched with the code of the first call (what the store
// checks each request with before it is queued).

const sid = req(id)

/** The request schemas of the operations every chat app calls (the seed's schemas plus the contract's later fields). */
export const coreRequests = {
  'session::append': object({
    session_id: sid,
    message: opt(agentMessage),
    custom: opt(customPayload),
    parent_id: opt(id),
    entry_id: opt(id),
    origin: opt(jsonObject),
  }),
  'session::update-message': object({
    session_id: sid,
    entry_id: req(id),
    content: req(blocks),
    details: opt(json),
    usage: opt(usage),
    stop_reason: opt(oneOf(STOP_REASONS)),
    error_message: opt(str),
    expected_revision: opt(uint),
    origin: opt(jsonObject),
  }),
} satisfies { [K in FunctionId]?: Parser<FunctionMap[K][0]> }

const metaFields = {
  title: opt(str),
  description: opt(str),
  metadata: opt(jsonObject),
  kind: opt(oneOf(KINDS)),
}
const cursor: Parser<string> = (v, p) => checkBoundedString(str(v, p), LIMITS.cursorBytes, p, 'a cursor')

/**
 * The request schemas of the operations a chat app may never call, or calls once in a while
 * (creating, deleting, meta and status, reads by page, batches, branch moves, forks, attachments,
 * drafts, tails, mentions): fetched with their code, on first use.
 */
export const rareRequests = {
  'session::create': object(metaFields),
  'session::ensure': object({ session_id: sid, ...metaFields }),
  'session::append-many': object({
    session_id: sid,
    messages: req(array(agentMessage)),
    parent_id: opt(id),
    origin: opt(jsonObject),
  }),
  'session::set-active-leaf': object({ session_id: sid, entry_id: req(id) }),
  'session::delete': object({ session_id: sid }),
  'session::set-meta': object({
    session_id: sid,
    title: opt(str),
    description: opt(str),
    metadata: opt(jsonObject),
  }),
  'session::set-status': object({ session_id: sid, status: req(oneOf(STATUSES)), reason: opt(str) }),
  'session::get': object({ session_id: sid }),
  'session::list': object({
    limit: opt(uint),
    cursor: opt(cursor),
    status: opt(oneOf(STATUSES)),
    kinds: opt(array(oneOf(KINDS))),
    metadata: opt(jsonObject),
    order: opt(oneOf(ORDERS)),
  }),
  'session::get-message': object({ session_id: sid, entry_id: req(id), include_image_data: opt(bool) }),
  'session::messages': object({
    session_id: sid,
    limit: opt(uint),
    cursor: opt(cursor),
    after_entry_id: opt(id),
    roles: opt(array(oneOf(ROLES))),
    from_entry_id: opt(id),
    include_custom: opt(bool),
    include_image_data: opt(bool),
  }),
  'session::fork': object({ session_id: sid, entry_id: req(id), title: opt(str) }),
  'session::set-draft': object({ session_id: sid, draft: opt(str), attachment_ids: opt(array(id)) }),
  // `name` is required by the wire schema; a `file` brings its own name, so the check that one of
  // them is there (and not blank) runs with the attachment rules, in the contract's order.
  'session::put-attachment': object({
    session_id: sid,
    name: opt(name),
    mime: opt(name),
    data: opt(str),
    file: opt(blob),
  }),
  'session::get-attachment': object({ session_id: sid, attachment_id: req(id), include_data: opt(bool) }),
  'session::list-attachments': object({ session_id: sid }),
  'session::delete-attachment': object({ session_id: sid, attachment_id: req(id) }),
  'session::messages-tail': object({
    session_id: sid,
    limit: opt(uint),
    before_entry_id: opt(id),
    until_entry_id: opt(id),
    include_custom: opt(bool),
    include_image_data: opt(bool),
  }),
  'session::messages-range': object({
    session_id: sid,
    from_entry_id: opt(id),
    to_entry_id: opt(id),
    entry_ids: opt(array(id)),
    limit: opt(uint),
    cursor: opt(cursor),
    include_image_data: opt(bool),
  }),
  'session::mention::search': object({
    query: opt(str),
    limit: opt(uint),
    context: opt(object({ session_id: opt(id), working_dir: opt(str) })),
  }),
  'session::mention::get': object({ id: req(str) }),
} satisfies { [K in FunctionId]?: Parser<FunctionMap[K][0]> }

/** One parser per function: the seed's request schemas plus the contract's later fields. */
export const requestParsers: { [K in FunctionId]: Parser<FunctionMap[K][0]> } = {
  ...coreRequests,
  ...rareRequests,
}

/** Checks a request for `functionId` as the store does (what transports validate with). */
export function parseRequest<K extends FunctionId>(functionId: K, request: unknown): FunctionMap[K][0] {
  return parseWith(requestParsers[functionId], request)
}
