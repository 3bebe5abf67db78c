import type { AgentMessage, ContentBlock, CustomPayload, Usage } from '../model/model.js'
import { bool, bounded, int, lit, name, num, object, opt, req, tagged, uint } from './record-parsers.js'
import { ERROR_KINDS, STOP_REASONS } from '../model/model.js'
import { array, id, json, oneOf, str, type Parser } from './validate.js'

// The schemas of what messages hold, built from the validator's parsers: what writes, imports
// and replication check messages with, fetched on first use. `parseAgentMessage` is exported
// from `./wire`, not the main entry: whatever the main entry reaches is in an app's first chunk.

// Made on first use (content blocks hold blocks: `contentBlock` is not defined yet here), then
// kept, so the list parser's paths are built once per place, not once per call.
let blockList: Parser<ContentBlock[]> | undefined
export const blocks: Parser<ContentBlock[]> = (v, p) => (blockList ??= array(contentBlock))(v, p)

export const contentBlock: Parser<ContentBlock> = tagged<ContentBlock>('type', {
  text: object({ type: lit('text'), text: req(str) }),
  image: object({ type: lit('image'), mime: req(name), data: req(str), attachment_id: opt(id) }),
  file: object({
    type: lit('file'),
    attachment_id: req(id),
    name: req(name),
    mime: req(name),
    size: req(uint),
  }),
  thinking: object({ type: lit('thinking'), text: req(str), signature: opt(str) }),
  function_call: object({
    type: lit('function_call'),
    id: req(id),
    function_id: req(name),
    arguments: opt(json, null),
  }),
  function_result: object({
    type: lit('function_result'),
    function_call_id: req(id),
    content: req(blocks),
    is_error: opt(bool),
  }),
})

export const usage: Parser<Usage> = object({
  input: opt(uint),
  output: opt(uint),
  cache_read: opt(uint),
  cache_write: opt(uint),
  reasoning: opt(uint),
  cost_usd: opt(num),
})

export const agentMessage: Parser<AgentMessage> = tagged<AgentMessage>('role', {
  user: object({ role: lit('user'), content: req(blocks), timestamp: req(int) }),
  assistant: object({
    role: lit('assistant'),
    content: req(blocks),
    stop_reason: req(oneOf(STOP_REASONS)),
    model: req(name),
    provider: req(name),
    timestamp: req(int),
    native_stop_reason: opt(name),
    error_message: opt(str),
    error_kind: opt(oneOf(ERROR_KINDS)),
    warnings: opt(array(str)),
    usage: opt(usage),
    agent: opt(name),
  }),
  function_result: object({
    role: lit('function_result'),
    function_call_id: req(id),
    function_id: req(name),
    content: req(blocks),
    timestamp: req(int),
    details: opt(json, null),
    is_error: opt(bool, false),
  }),
  custom: object({
    role: lit('custom'),
    custom_type: req(name),
    content: req(blocks),
    timestamp: req(int),
    display: opt(str),
    details: opt(json),
  }),
})

export const customPayload: Parser<CustomPayload> = object({ custom_type: req(name), data: opt(json, null) })

export const parseAgentMessage = bounded(agentMessage)
