import type { FunctionId } from '../src/index.js'
import {
  assistantMessage,
  customMessage,
  parsePath,
  resultMessage,
  userMessage,
  type Path,
} from './validation-cases.js'

/**
 * Hostile ids and bodies, shared by the node tests, the IndexedDB tests in Chromium and the
 * sync outbox tests: one list of what must be refused and what must keep working.
 */

/** Valid ids that look dangerous: path tricks, reserved Windows names, case and normalization twins. */
export const hostileValidIds: readonly string[] = [
  '../escape/chat 42:?',
  '..',
  '.',
  'dots.in.the.middle.',
  ' trailing space ',
  'Chat-A',
  'chat-a',
  'caf\u00e9', // NFC
  'cafe\u0301', // NFD: another id, another session
  'CON',
  'aux.txt',
  'nul',
  'COM1',
  'a/b\\c|d*e"f<g>h',
  '\u{1f600} emoji \u4e2d\u6587',
  'x'.repeat(255), // 255 bytes: the longest id
  '\u00e9'.repeat(127) + 'x', // 255 bytes in 128 characters
]

/** Ids the validator refuses: lone surrogates and more than 255 UTF-8 bytes. */
export const invalidIds: ReadonlyArray<readonly [string, string]> = [
  ['a lone high surrogate', 'q\ud800'],
  ['a lone low surrogate', '\udc00q'],
  ['a reversed pair', 'q\udc00\ud800'],
  ['256 ASCII bytes', 'x'.repeat(256)],
  ['256 bytes in 128 characters', '\u00e9'.repeat(128)],
  ['3,000 characters', 'y'.repeat(3000)],
]

/** An array nested `depth` levels deep, built without recursion. */
export function deepArray(depth: number): unknown {
  let v: unknown = 0
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

/** Function results nested `depth` levels deep through their content (a recursive block type). */
export function deepResults(depth: number): Record<string, unknown> {
  let block: Record<string, unknown> = { type: 'text', text: 'x' }
  for (let i = 0; i < depth; i++) block = { type: 'function_result', function_call_id: 'c', content: [block] }
  return block
}

export interface FieldCase {
  fn: FunctionId
  base: Record<string, unknown>
  path: Path
}
const f = (fn: FunctionId, base: Record<string, unknown>, path: string): FieldCase => ({
  fn,
  base,
  path: parsePath(path),
})

// The fixture holds session s_001 with entries e_001..e_004.
const append = { session_id: 's_001', message: userMessage, parent_id: 'e_001', entry_id: 'new' }
const withCall = {
  session_id: 's_001',
  message: {
    role: 'assistant',
    content: [
      { type: 'function_call', id: 'c1', function_id: 'shell::run', arguments: {} },
      { type: 'image', mime: 'image/png', data: 'aGk=', attachment_id: 'a1' },
    ],
    stop_reason: 'end',
    model: 'm',
    provider: 'p',
    timestamp: 0,
  },
}

/** Every id and name field of every function, as a path into a valid base request. */
export const idFields: readonly FieldCase[] = [
  f('session::ensure', { session_id: 'new' }, 'session_id'),
  f('session::get', { session_id: 's_001' }, 'session_id'),
  f('session::delete', { session_id: 's_001' }, 'session_id'),
  f('session::set-meta', { session_id: 's_001', title: 't' }, 'session_id'),
  f('session::set-status', { session_id: 's_001', status: 'working' }, 'session_id'),
  f('session::append', append, 'session_id'),
  f('session::append', append, 'entry_id'),
  f('session::append', append, 'parent_id'),
  f(
    'session::append',
    { session_id: 's_001', custom: { custom_type: 'c', data: null } },
    'custom.custom_type',
  ),
  f('session::append', withCall, 'message.content[0].id'),
  f('session::append', withCall, 'message.content[0].function_id'),
  f('session::append', withCall, 'message.content[1].attachment_id'),
  f('session::append', withCall, 'message.content[1].mime'),
  f('session::append', withCall, 'message.model'),
  f('session::append', withCall, 'message.provider'),
  f('session::append', { session_id: 's_001', message: resultMessage }, 'message.function_call_id'),
  f('session::append', { session_id: 's_001', message: resultMessage }, 'message.function_id'),
  f('session::append', { session_id: 's_001', message: customMessage }, 'message.custom_type'),
  f('session::append', { session_id: 's_001', message: assistantMessage }, 'message.agent'),
  f(
    'session::append-many',
    { session_id: 's_001', messages: [userMessage], parent_id: 'e_001' },
    'parent_id',
  ),
  f('session::get-message', { session_id: 's_001', entry_id: 'e_001' }, 'entry_id'),
  f('session::messages', { session_id: 's_001' }, 'after_entry_id'),
  f('session::messages', { session_id: 's_001' }, 'from_entry_id'),
  f(
    'session::update-message',
    { session_id: 's_001', entry_id: 'e_001', content: [{ type: 'text', text: 'x' }] },
    'entry_id',
  ),
  f('session::set-active-leaf', { session_id: 's_001', entry_id: 'e_001' }, 'entry_id'),
  f('session::fork', { session_id: 's_001', entry_id: 'e_001' }, 'entry_id'),
]

/** Free-form JSON fields where a hostile body can nest: each takes a deep value at its path. */
export const jsonFields: readonly FieldCase[] = [
  f('session::ensure', { session_id: 'new', metadata: { k: null } }, 'metadata.k'),
  f('session::set-meta', { session_id: 's_001', metadata: { k: null } }, 'metadata.k'),
  f('session::list', { metadata: { k: null } }, 'metadata.k'),
  f('session::append', { ...withCall, origin: { k: null } }, 'message.content[0].arguments'),
  f('session::append', { session_id: 's_001', message: resultMessage }, 'message.details'),
  f('session::append', { session_id: 's_001', custom: { custom_type: 'c', data: null } }, 'custom.data'),
  f('session::append', { session_id: 's_001', message: userMessage, origin: { k: null } }, 'origin.k'),
  f(
    'session::update-message',
    { session_id: 's_001', entry_id: 'e_003', content: [{ type: 'text', text: 'x' }], details: null },
    'details',
  ),
]
