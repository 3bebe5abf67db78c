// The seed's wire model (session-manager 1.0.x JSON schemas plus the later additions the
// contract lists: `kind`, `kinds`, `after_entry_id`, `origin` on items, `usage` on updates,
// `agent` on assistant messages). snake_case on purpose: these objects are the wire format.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

export type Role = 'user' | 'assistant' | 'function_result' | 'custom'
export type StopReason = 'end' | 'length' | 'function_call' | 'aborted' | 'error'
export type ErrorKind = 'auth_expired' | 'rate_limited' | 'context_overflow' | 'transient' | 'permanent'
export type SessionStatus = 'idle' | 'working' | 'done' | 'error'
export type SessionKind = 'user' | 'automation' | 'e2e'
export type ListOrder = 'created_asc' | 'created_desc' | 'updated_desc'

export const ROLES: readonly Role[] = ['user', 'assistant', 'function_result', 'custom']
export const STOP_REASONS: readonly StopReason[] = ['end', 'length', 'function_call', 'aborted', 'error']
export const ERROR_KINDS: readonly ErrorKind[] = [
  'auth_expired',
  'rate_limited',
  'context_overflow',
  'transient',
  'permanent',
]
export const STATUSES: readonly SessionStatus[] = ['idle', 'working', 'done', 'error']
export const KINDS: readonly SessionKind[] = ['user', 'automation', 'e2e']
export const ORDERS: readonly ListOrder[] = ['created_asc', 'created_desc', 'updated_desc']

export interface Usage {
  input?: number
  output?: number
  cache_read?: number
  cache_write?: number
  reasoning?: number
  cost_usd?: number
}

export interface TextBlock {
  type: 'text'
  text: string
}
export interface ImageBlock {
  type: 'image'
  mime: string
  data: string
  attachment_id?: string
}
export interface FileBlock {
  type: 'file'
  attachment_id: string
  name: string
  mime: string
  size: number
}
export interface ThinkingBlock {
  type: 'thinking'
  text: string
  signature?: string
}
export interface FunctionCallBlock {
  type: 'function_call'
  id: string
  function_id: string
  arguments: Json
}
export interface FunctionResultBlock {
  type: 'function_result'
  function_call_id: string
  content: ContentBlock[]
  is_error?: boolean
}
export type ContentBlock =
  TextBlock | ImageBlock | FileBlock | ThinkingBlock | FunctionCallBlock | FunctionResultBlock

export interface UserMessage {
  role: 'user'
  content: ContentBlock[]
  timestamp: number
}
export interface AssistantMessage {
  role: 'assistant'
  content: ContentBlock[]
  stop_reason: StopReason
  model: string
  provider: string
  timestamp: number
  native_stop_reason?: string
  error_message?: string
  error_kind?: ErrorKind
  warnings?: string[]
  usage?: Usage
  agent?: string
}
export interface FunctionResultMessage {
  role: 'function_result'
  function_call_id: string
  function_id: string
  content: ContentBlock[]
  timestamp: number
  details: Json
  is_error: boolean
}
export interface CustomMessage {
  role: 'custom'
  custom_type: string
  content: ContentBlock[]
  timestamp: number
  display?: string
  details?: Json
}
export type AgentMessage = UserMessage | AssistantMessage | FunctionResultMessage | CustomMessage

export interface CustomPayload {
  custom_type: string
  data: Json
}

interface EntryBase {
  id: string
  parent_id: string | null
  timestamp: number
  revision: number
  origin?: JsonObject
}
export interface MessageEntry extends EntryBase {
  kind: 'message'
  message: AgentMessage
}
export interface CustomEntry extends EntryBase {
  kind: 'custom'
  custom_type: string
  data: Json
}
export type SessionEntry = MessageEntry | CustomEntry

export interface AttachmentMeta {
  attachment_id: string
  session_id: string
  name: string
  mime: string
  size: number
  sha256: string
  created_at: number
}

export interface SessionMeta {
  session_id: string
  title: string
  description: string
  status: SessionStatus
  status_reason?: string
  kind: SessionKind
  metadata?: JsonObject
  forked_from?: string
  draft?: string
  draft_attachments?: AttachmentMeta[]
  created_at: number
  updated_at: number
  message_count: number
}

export interface MessageItem {
  entry_id: string
  message?: AgentMessage
  custom?: CustomPayload
  origin?: JsonObject
}

// ---- requests and responses -------------------------------------------------------------

export interface CreateRequest {
  title?: string | null
  description?: string | null
  metadata?: JsonObject | null
  kind?: SessionKind | null
}
export interface CreateResponse {
  session_id: string
  meta: SessionMeta
}
export interface EnsureRequest extends CreateRequest {
  session_id: string
}
export interface EnsureResponse {
  session_id: string
  meta: SessionMeta
  created: boolean
}
export interface GetRequest {
  session_id: string
}
export type GetResponse = { meta: SessionMeta } | null
export interface ListRequest {
  limit?: number | null
  cursor?: string | null
  status?: SessionStatus | null
  kinds?: SessionKind[] | null
  metadata?: JsonObject | null
  order?: ListOrder | null
}
export interface ListResponse {
  sessions: SessionMeta[]
  next_cursor?: string
}
export interface DeleteRequest {
  session_id: string
}
export interface DeleteResponse {
  deleted: boolean
}
export interface SetMetaRequest {
  session_id: string
  title?: string | null
  description?: string | null
  metadata?: JsonObject | null
}
export interface SetMetaResponse {
  meta: SessionMeta
}
export interface SetStatusRequest {
  session_id: string
  status: SessionStatus
  reason?: string | null
}
export interface SetStatusResponse {
  status: SessionStatus
  previous_status: SessionStatus
}
export interface AppendRequest {
  session_id: string
  message?: AgentMessage | null
  custom?: CustomPayload | null
  parent_id?: string | null
  entry_id?: string | null
  origin?: JsonObject | null
}
export interface AppendResponse {
  entry_id: string
  parent_id: string | null
  timestamp: number
}
export interface AppendManyRequest {
  session_id: string
  messages: AgentMessage[]
  parent_id?: string | null
  origin?: JsonObject | null
}
export interface AppendManyResponse {
  entry_ids: string[]
  last_entry_id: string
}
export interface GetMessageRequest {
  session_id: string
  entry_id: string
  include_image_data?: boolean | null
}
export type GetMessageResponse = { entry: SessionEntry } | null
export interface MessagesRequest {
  session_id: string
  limit?: number | null
  cursor?: string | null
  after_entry_id?: string | null
  roles?: Role[] | null
  from_entry_id?: string | null
  include_custom?: boolean | null
  include_image_data?: boolean | null
}
export interface MessagesResponse {
  messages: MessageItem[]
  next_cursor?: string
}
export interface UpdateMessageRequest {
  session_id: string
  entry_id: string
  content: ContentBlock[]
  details?: Json
  usage?: Usage | null
  /** How an assistant message ended (a stopped, failed or interrupted reply); kept when omitted. */
  stop_reason?: StopReason | null
  /** Why an assistant message ended as it did; kept when omitted. */
  error_message?: string | null
  expected_revision?: number | null
  origin?: JsonObject | null
}
export interface UpdateMessageResponse {
  updated: boolean
  revision: number
}
export interface SetActiveLeafRequest {
  session_id: string
  entry_id: string
}
export interface SetActiveLeafResponse {
  active_leaf: string
}
export interface ForkRequest {
  session_id: string
  entry_id: string
  title?: string | null
}
export interface ForkResponse {
  session_id: string
  meta: SessionMeta
}

export interface SetDraftRequest {
  session_id: string
  draft?: string | null
  attachment_ids?: string[] | null
}
export interface SetDraftResponse {
  draft: string | null
  attachments: AttachmentMeta[]
}
/**
 * The wire form takes base64 `data`; in process a `Blob` or `File` may be passed as `file`
 * instead (its `name` and `type` fill `name` and `mime` when those are absent).
 */
export interface PutAttachmentRequest {
  session_id: string
  name?: string | null
  mime?: string | null
  data?: string | null
  file?: Blob | null
}
export interface PutAttachmentResponse {
  attachment: AttachmentMeta
  block: FileBlock
}
export interface GetAttachmentRequest {
  session_id: string
  attachment_id: string
  include_data?: boolean | null
}
/** `data` is the base64 of the bytes, or `null` when `include_data` was false. */
export type GetAttachmentResponse = { attachment: AttachmentMeta; data: string | null } | null
export interface ListAttachmentsRequest {
  session_id: string
}
export interface ListAttachmentsResponse {
  attachments: AttachmentMeta[]
}
export interface DeleteAttachmentRequest {
  session_id: string
  attachment_id: string
}
export interface DeleteAttachmentResponse {
  deleted: boolean
}

/** An item of `messages-tail` / `messages-range`: a message item, flagged when elided in a run. */
export interface TailItem extends MessageItem {
  elided?: true
}
export interface MessagesTailRequest {
  session_id: string
  limit?: number | null
  before_entry_id?: string | null
  until_entry_id?: string | null
  include_custom?: boolean | null
  include_image_data?: boolean | null
}
export interface MessagesTailResponse {
  messages: TailItem[]
  has_more: boolean
  oldest_entry_id?: string
}
export interface MessagesRangeRequest {
  session_id: string
  from_entry_id?: string | null
  to_entry_id?: string | null
  entry_ids?: string[] | null
  limit?: number | null
  cursor?: string | null
  include_image_data?: boolean | null
}
export interface MessagesRangeResponse {
  messages: TailItem[]
  next_cursor?: string
}

export interface MentionSearchRequest {
  query?: string | null
  limit?: number | null
  context?: { session_id?: string | null; working_dir?: string | null } | null
}
export interface MentionItem {
  id: string
  label: string
  hint?: string
  description: string
  color: string
}
export interface MentionSearchResponse {
  items: MentionItem[]
  /**
   * Set when the search ran out of its work budget (a very long query or titles, or very many
   * sessions): `items` are the best matches among the sessions it could look at, not all of them.
   */
  incomplete?: true
}
export interface MentionGetRequest {
  id: string
}
export interface MentionField {
  label: string
  value: string
  tone?: string
}
export interface MentionView {
  id: string
  label: string
  hint?: string
  description: string
  icon: 'session'
  color: string
  fields: MentionField[]
  open: { session: string }
  summary: string
  data: SessionMeta
  updated_at: string
}
export type MentionGetResponse = MentionView | null

/** Function id → [request, response]; `call()` and transports dispatch on it. */
export interface FunctionMap {
  'session::create': [CreateRequest, CreateResponse]
  'session::ensure': [EnsureRequest, EnsureResponse]
  'session::get': [GetRequest, GetResponse]
  'session::list': [ListRequest, ListResponse]
  'session::delete': [DeleteRequest, DeleteResponse]
  'session::set-meta': [SetMetaRequest, SetMetaResponse]
  'session::set-status': [SetStatusRequest, SetStatusResponse]
  'session::append': [AppendRequest, AppendResponse]
  'session::append-many': [AppendManyRequest, AppendManyResponse]
  'session::get-message': [GetMessageRequest, GetMessageResponse]
  'session::messages': [MessagesRequest, MessagesResponse]
  'session::update-message': [UpdateMessageRequest, UpdateMessageResponse]
  'session::set-active-leaf': [SetActiveLeafRequest, SetActiveLeafResponse]
  'session::fork': [ForkRequest, ForkResponse]
  'session::set-draft': [SetDraftRequest, SetDraftResponse]
  'session::put-attachment': [PutAttachmentRequest, PutAttachmentResponse]
  'session::get-attachment': [GetAttachmentRequest, GetAttachmentResponse]
  'session::list-attachments': [ListAttachmentsRequest, ListAttachmentsResponse]
  'session::delete-attachment': [DeleteAttachmentRequest, DeleteAttachmentResponse]
  'session::messages-tail': [MessagesTailRequest, MessagesTailResponse]
  'session::messages-range': [MessagesRangeRequest, MessagesRangeResponse]
  'session::mention::search': [MentionSearchRequest, MentionSearchResponse]
  'session::mention::get': [MentionGetRequest, MentionGetResponse]
}
export type FunctionId = keyof FunctionMap
export const FUNCTION_IDS = [
  'session::create',
  'session::ensure',
  'session::get',
  'session::list',
  'session::delete',
  'session::set-meta',
  'session::set-status',
  'session::append',
  'session::append-many',
  'session::get-message',
  'session::messages',
  'session::update-message',
  'session::set-active-leaf',
  'session::fork',
  'session::set-draft',
  'session::put-attachment',
  'session::get-attachment',
  'session::list-attachments',
  'session::delete-attachment',
  'session::messages-tail',
  'session::messages-range',
  'session::mention::search',
  'session::mention::get',
] as const satisfies readonly FunctionId[]

// ---- events -----------------------------------------------------------------------------

export interface CreatedEvent {
  session_id: string
  title: string
  description: string
  status: SessionStatus
  forked_from?: string
  created_at: number
}
export interface MessageAddedEvent {
  session_id: string
  entry_id: string
  parent_id: string | null
  message?: AgentMessage
  custom?: CustomPayload
  origin?: JsonObject
  timestamp: number
}
export interface MessageUpdatedEvent {
  session_id: string
  entry_id: string
  message: AgentMessage
  revision: number
  origin?: JsonObject
  timestamp: number
}
export interface StatusChangedEvent {
  session_id: string
  status: SessionStatus
  previous_status: SessionStatus
  status_reason?: string
  timestamp: number
}
export interface MetaUpdatedEvent {
  session_id: string
  title: string
  description: string
  metadata?: JsonObject
  timestamp: number
}
export interface DeletedEvent {
  session_id: string
  timestamp: number
}

export interface EventMap {
  'session::created': CreatedEvent
  'session::message-added': MessageAddedEvent
  'session::message-updated': MessageUpdatedEvent
  'session::status-changed': StatusChangedEvent
  'session::meta-updated': MetaUpdatedEvent
  'session::deleted': DeletedEvent
}
export type TriggerType = keyof EventMap
export const TRIGGER_TYPES = [
  'session::created',
  'session::message-added',
  'session::message-updated',
  'session::status-changed',
  'session::meta-updated',
  'session::deleted',
] as const satisfies readonly TriggerType[]

/** What a subscriber filters on; keys allowed per trigger type are fixed by the contract (4.2). */
export interface EventConfig {
  session_id?: string | null
  roles?: Role[] | null
  metadata?: JsonObject | null
}

/** An event as the emitter holds it: payload plus the session's metadata snapshot for filtering. */
export interface EventEnvelope<T extends TriggerType = TriggerType> {
  trigger_type: T
  payload: EventMap[T]
  session_metadata?: JsonObject
}
