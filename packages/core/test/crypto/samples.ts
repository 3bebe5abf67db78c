import type { AttachmentMeta, SessionEntry, SessionMeta } from '../../src/index.js'
import { parseSessionEntry, parseSessionMeta } from '../../src/wire.js'

// Records holding a marker in every value the policy seals, one entry of every kind and role and
// every content block, for the crypto suites. The marker is also in the one clear metadata key the
// policy declares, so a search that could not find it would show.

export const MARKER = 'zq-MARKER-7f3a'
export const SESSION = 's_crypto'
export const CLEAR_KEYS = ['owner']

const m = (what: string): string => `${what} ${MARKER}`
const PNG = 'iVBORw0KGgo=' // base64, any bytes do

export const attachment: AttachmentMeta = {
  attachment_id: 'a_1',
  session_id: SESSION,
  name: m('notes.pdf'),
  mime: 'application/pdf',
  size: 5,
  sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
  created_at: 1_700_000_000_000,
}
export const attachmentBytes = new TextEncoder().encode('hello')

const raw: unknown[] = [
  {
    id: 'e_user',
    parent_id: null,
    timestamp: 1_700_000_000_001,
    revision: 0,
    origin: { turn_id: m('turn') },
    kind: 'message',
    message: {
      role: 'user',
      timestamp: 1_700_000_000_001,
      content: [
        { type: 'text', text: m('hello') },
        { type: 'image', mime: 'image/png', data: PNG, attachment_id: 'a_img' },
        { type: 'file', attachment_id: 'a_1', name: m('notes.pdf'), mime: 'application/pdf', size: 5 },
      ],
    },
  },
  {
    id: 'e_assistant',
    parent_id: 'e_user',
    timestamp: 1_700_000_000_002,
    revision: 3,
    kind: 'message',
    message: {
      role: 'assistant',
      timestamp: 1_700_000_000_002,
      content: [
        { type: 'thinking', text: m('thinking'), signature: m('sig') },
        { type: 'text', text: m('answer') },
        { type: 'function_call', id: 'call_1', function_id: 'search', arguments: { q: m('query') } },
      ],
      stop_reason: 'error',
      model: m('model'),
      provider: m('provider'),
      native_stop_reason: m('native'),
      error_message: m('error'),
      error_kind: 'transient',
      warnings: [m('warning')],
      usage: { input: 12, output: 34, cache_read: 1, cache_write: 2, reasoning: 3, cost_usd: 0.25 },
      agent: m('agent'),
    },
  },
  {
    id: 'e_result',
    parent_id: 'e_assistant',
    timestamp: 1_700_000_000_003,
    revision: 0,
    kind: 'message',
    message: {
      role: 'function_result',
      function_call_id: 'call_1',
      function_id: 'search',
      timestamp: 1_700_000_000_003,
      content: [
        {
          type: 'function_result',
          function_call_id: 'call_1',
          content: [{ type: 'text', text: m('result') }],
          is_error: false,
        },
      ],
      details: { raw: m('details') },
      is_error: false,
    },
  },
  {
    id: 'e_custom_message',
    parent_id: 'e_result',
    timestamp: 1_700_000_000_004,
    revision: 1,
    kind: 'message',
    message: {
      role: 'custom',
      custom_type: m('note'),
      timestamp: 1_700_000_000_004,
      content: [{ type: 'text', text: m('custom text') }],
      display: m('display'),
      details: [m('d')],
    },
  },
  {
    id: 'e_custom',
    parent_id: 'e_custom_message',
    timestamp: 1_700_000_000_005,
    revision: 0,
    origin: { by: m('origin') },
    kind: 'custom',
    custom_type: m('compaction'),
    data: { summary: m('summary'), n: 3 },
  },
]

/** Every entry kind, checked by the store's own validator (defaults filled as stored). */
export const entries: SessionEntry[] = raw.map((e) => parseSessionEntry(e, 'sample'))

export const meta: SessionMeta = parseSessionMeta(
  {
    session_id: SESSION,
    title: m('title'),
    description: m('description'),
    status: 'error',
    status_reason: m('reason'),
    kind: 'user',
    metadata: { owner: `alice ${MARKER}`, project: m('project'), [m('key')]: 1 },
    forked_from: 's_origin',
    draft: m('draft'),
    draft_attachments: [attachment],
    created_at: 1_700_000_000_000,
    updated_at: 1_700_000_000_005,
    message_count: 4,
  },
  'sample',
)
