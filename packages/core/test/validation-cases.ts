import type { FunctionId } from '../src/index.js'

/**
 * Bad-input cases for every request field of every function (seed schemas + contract 1.1-1.6).
 * Each field is described once against a valid base request: a wrong-typed value, whether it is
 * required (then a "missing" case is derived) and an unknown enum value where the field is an
 * enum. Paths use the validator's notation (`message.content[0].type`), which errors must name.
 */
export type Path = readonly (string | number)[]

export interface BadCase {
  fn: FunctionId
  base: Record<string, unknown>
  path: Path
  /** `MISSING` deletes the field. */
  value: unknown
  why: 'wrong type' | 'missing required field' | 'unknown enum value' | 'not a JSON value'
}

export const MISSING = Symbol('missing')

// Built fresh each time: structuredClone keeps shared references, so a shared block would be
// changed at two paths at once.
const text = (): Record<string, unknown> => ({ type: 'text', text: 'hi' })
export const allBlocks = [
  text(),
  { type: 'image', mime: 'image/png', data: 'aGk=', attachment_id: 'a_001' },
  { type: 'file', attachment_id: 'a_002', name: 'n.txt', mime: 'text/plain', size: 2 },
  { type: 'thinking', text: 'hmm', signature: 'sig' },
  { type: 'function_call', id: 'c1', function_id: 'shell::run', arguments: { cmd: 'ls' } },
  { type: 'function_result', function_call_id: 'c1', content: [text()], is_error: false },
]
export const userMessage = { role: 'user', content: allBlocks, timestamp: 0 }
export const assistantMessage = {
  role: 'assistant',
  content: [text()],
  stop_reason: 'end',
  model: 'm',
  provider: 'p',
  timestamp: 0,
  native_stop_reason: 'stop',
  error_message: 'e',
  error_kind: 'transient',
  warnings: ['w'],
  agent: 'ag',
  usage: { input: 1, output: 2, cache_read: 3, cache_write: 4, reasoning: 5, cost_usd: 0.5 },
}
export const resultMessage = {
  role: 'function_result',
  function_call_id: 'c1',
  function_id: 'shell::run',
  content: [text()],
  timestamp: 0,
  details: { code: 0 },
  is_error: false,
}
export const customMessage = {
  role: 'custom',
  custom_type: 'notice',
  content: [text()],
  timestamp: 0,
  display: 'd',
  details: { a: 1 },
}

interface Field {
  path: string
  wrong: unknown[]
  required?: boolean
  badEnum?: string
  /** The field takes any JSON: its only wrong value is a non-JSON one. */
  json?: boolean
}
const field = (path: string, wrong: unknown[], opts: Omit<Field, 'path' | 'wrong'> = {}): Field => ({
  path,
  wrong,
  ...opts,
})
const req = (path: string, wrong: unknown[] = [12345]): Field => field(path, wrong, { required: true })
const str = (path: string): Field => field(path, [12345])
const sid = req('session_id')
const anyJson = (path: string): Field => field(path, [Number.NaN], { json: true })

const blockFields = (prefix: string): Field[] => [
  field(`${prefix}[0].type`, [7], { required: true, badEnum: 'video' }),
  req(`${prefix}[0].text`),
  req(`${prefix}[1].mime`),
  req(`${prefix}[1].data`),
  str(`${prefix}[1].attachment_id`),
  req(`${prefix}[2].attachment_id`),
  req(`${prefix}[2].name`),
  req(`${prefix}[2].mime`),
  req(`${prefix}[2].size`, ['2', -1, 1.5]),
  req(`${prefix}[3].text`),
  str(`${prefix}[3].signature`),
  req(`${prefix}[4].id`),
  req(`${prefix}[4].function_id`),
  anyJson(`${prefix}[4].arguments`),
  req(`${prefix}[5].function_call_id`),
  req(`${prefix}[5].content`, ['x', { type: 'text' }]),
  field(`${prefix}[5].is_error`, ['yes']),
  field(`${prefix}[5].content[0].type`, [null, 1], { badEnum: 'video' }),
]
const usageFields = (prefix: string): Field[] => [
  field(prefix, ['x', [1]]),
  ...['input', 'output', 'cache_read', 'cache_write', 'reasoning'].map((k) =>
    field(`${prefix}.${k}`, [-1, 1.5, '1']),
  ),
  field(`${prefix}.cost_usd`, ['0.1', true]),
]
const meta = [
  str('title'),
  str('description'),
  field('metadata', ['x', [1], 3]),
  field('kind', [1], { badEnum: 'robot' }),
]

const table: Array<{ fn: FunctionId; base: Record<string, unknown>; fields: Field[] }> = [
  { fn: 'session::create', base: {}, fields: meta },
  { fn: 'session::ensure', base: { session_id: 'new' }, fields: [sid, ...meta] },
  { fn: 'session::get', base: { session_id: 's_001' }, fields: [sid] },
  {
    fn: 'session::list',
    base: { kinds: ['user'] },
    fields: [
      field('limit', ['10', -1, 1.5]),
      str('cursor'),
      field('status', [1], { badEnum: 'halted' }),
      field('kinds', ['user']),
      field('kinds[0]', [1], { badEnum: 'robot' }),
      field('metadata', ['x']),
      field('order', [1], { badEnum: 'alphabetical' }),
    ],
  },
  { fn: 'session::delete', base: { session_id: 's_001' }, fields: [sid] },
  {
    fn: 'session::set-meta',
    base: { session_id: 's_001', title: 't' },
    fields: [sid, str('title'), str('description'), field('metadata', ['x', []])],
  },
  {
    fn: 'session::set-status',
    base: { session_id: 's_001', status: 'working' },
    fields: [sid, field('status', [1], { required: true, badEnum: 'halted' }), str('reason')],
  },
  {
    fn: 'session::append',
    base: {
      session_id: 's_001',
      message: userMessage,
      parent_id: 'e_001',
      entry_id: 'new',
      origin: { turn_id: 't' },
    },
    fields: [
      sid,
      field('message', ['x', [userMessage]]),
      field('message.role', [1], { required: true, badEnum: 'robot' }),
      req('message.content', ['x', {}]),
      req('message.timestamp', ['0', 1.5]),
      ...blockFields('message.content'),
      str('parent_id'),
      str('entry_id'),
      field('origin', ['x', [1]]),
    ],
  },
  {
    fn: 'session::append',
    base: { session_id: 's_001', custom: { custom_type: 'c', data: { a: 1 } } },
    fields: [field('custom', ['x']), req('custom.custom_type'), anyJson('custom.data')],
  },
  {
    fn: 'session::append',
    base: { session_id: 's_001', message: assistantMessage },
    fields: [
      field('message.stop_reason', [1], { required: true, badEnum: 'halt' }),
      req('message.model'),
      req('message.provider'),
      req('message.timestamp', ['0']),
      str('message.native_stop_reason'),
      str('message.error_message'),
      field('message.error_kind', [1], { badEnum: 'oops' }),
      field('message.warnings', ['w']),
      field('message.warnings[0]', [1]),
      ...usageFields('message.usage'),
      str('message.agent'),
    ],
  },
  {
    fn: 'session::append',
    base: { session_id: 's_001', message: resultMessage },
    fields: [
      req('message.function_call_id'),
      req('message.function_id'),
      req('message.content'),
      req('message.timestamp', [1.5]),
      anyJson('message.details'),
      field('message.is_error', ['no']),
    ],
  },
  {
    fn: 'session::append',
    base: { session_id: 's_001', message: customMessage },
    fields: [
      req('message.custom_type'),
      req('message.content'),
      req('message.timestamp', [null, '1']),
      str('message.display'),
      anyJson('message.details'),
    ],
  },
  {
    fn: 'session::append-many',
    base: {
      session_id: 's_001',
      messages: [userMessage, assistantMessage],
      parent_id: 'e_001',
      origin: { a: 1 },
    },
    fields: [
      sid,
      req('messages', ['x', userMessage]),
      field('messages[1].role', [2], { badEnum: 'robot' }),
      field('messages[1].stop_reason', [2], { badEnum: 'halt' }),
      field('messages[0].content[0].type', [2], { badEnum: 'video' }),
      str('parent_id'),
      field('origin', [[]]),
    ],
  },
  {
    fn: 'session::get-message',
    base: { session_id: 's_001', entry_id: 'e_001' },
    fields: [sid, req('entry_id'), field('include_image_data', ['yes', 1])],
  },
  {
    fn: 'session::messages',
    base: { session_id: 's_001', roles: ['user'] },
    fields: [
      sid,
      field('limit', ['5', -1]),
      str('cursor'),
      str('after_entry_id'),
      field('roles', ['user']),
      field('roles[0]', [1], { badEnum: 'robot' }),
      str('from_entry_id'),
      field('include_custom', ['true']),
      field('include_image_data', [1]),
    ],
  },
  {
    fn: 'session::update-message',
    base: {
      session_id: 's_001',
      entry_id: 'e_003',
      content: allBlocks,
      details: { a: 1 },
      usage: { input: 1 },
      expected_revision: 0,
      origin: { a: 1 },
    },
    fields: [
      sid,
      req('entry_id'),
      req('content', ['x', text()]),
      ...blockFields('content'),
      anyJson('details'),
      ...usageFields('usage'),
      field('expected_revision', [-1, '0', 1.5]),
      field('origin', ['x']),
    ],
  },
  {
    fn: 'session::set-active-leaf',
    base: { session_id: 's_001', entry_id: 'e_001' },
    fields: [sid, req('entry_id')],
  },
  {
    fn: 'session::fork',
    base: { session_id: 's_001', entry_id: 'e_001', title: 't' },
    fields: [sid, req('entry_id'), str('title')],
  },
  {
    fn: 'session::set-draft',
    base: { session_id: 's_001', draft: 'd', attachment_ids: [] },
    fields: [sid, str('draft'), field('attachment_ids', ['a_001', {}]), field('attachment_ids[0]', [1])],
  },
  {
    fn: 'session::put-attachment',
    base: { session_id: 's_001', name: 'n.txt', mime: 'text/plain', data: 'aGk=' },
    fields: [sid, str('name'), str('mime'), str('data'), field('file', ['x', {}, [1]])],
  },
  {
    fn: 'session::get-attachment',
    base: { session_id: 's_001', attachment_id: 'a_001', include_data: false },
    fields: [sid, req('attachment_id'), field('include_data', ['no'])],
  },
  { fn: 'session::list-attachments', base: { session_id: 's_001' }, fields: [sid] },
  {
    fn: 'session::delete-attachment',
    base: { session_id: 's_001', attachment_id: 'a_404' },
    fields: [sid, req('attachment_id')],
  },
  {
    fn: 'session::messages-tail',
    base: { session_id: 's_001', limit: 2, include_custom: true },
    fields: [
      sid,
      field('limit', ['2', -1, 1.5]),
      str('before_entry_id'),
      str('until_entry_id'),
      field('include_custom', ['yes']),
      field('include_image_data', [0]),
    ],
  },
  {
    fn: 'session::messages-range',
    base: { session_id: 's_001', entry_ids: ['e_001'], limit: 2 },
    fields: [
      sid,
      str('from_entry_id'),
      str('to_entry_id'),
      field('entry_ids', ['e_001']),
      field('entry_ids[0]', [1]),
      field('limit', [-1]),
      str('cursor'),
      field('include_image_data', ['x']),
    ],
  },
  {
    fn: 'session::mention::search',
    base: { query: 'x', limit: 3, context: { session_id: 's_001' } },
    fields: [
      str('query'),
      field('limit', ['3', -1]),
      field('context', ['x', [1]]),
      str('context.session_id'),
      str('context.working_dir'),
    ],
  },
  { fn: 'session::mention::get', base: { id: 's_001' }, fields: [req('id')] },
]

export const parsePath = (path: string): Path =>
  path.split('.').flatMap((part) => {
    const [key, ...idx] = part.split('[')
    return [key, ...idx.map((i) => Number(i.slice(0, -1)))]
  })

export const showPath = (path: Path): string =>
  path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('')

/** A deep copy of `base` with the value at `path` replaced (or removed for `MISSING`). */
export function withValue(
  base: Record<string, unknown>,
  path: Path,
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(base)
  let at: Record<string | number, unknown> = copy
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>
  const last = path[path.length - 1]
  if (value === MISSING) delete at[last]
  else at[last] = value
  return copy
}

export const valueAt = (base: unknown, path: Path): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], base)

export const bases: Array<{ fn: FunctionId; base: Record<string, unknown> }> = table.map(({ fn, base }) => ({
  fn,
  base,
}))

export const badCases: BadCase[] = table.flatMap(({ fn, base, fields }) =>
  fields.flatMap((f): BadCase[] => {
    const path = parsePath(f.path)
    const make = (value: unknown, why: BadCase['why']): BadCase => ({ fn, base, path, value, why })
    return [
      ...f.wrong.map((v) => make(v, f.json ? 'not a JSON value' : 'wrong type')),
      ...(f.required ? [make(MISSING, 'missing required field')] : []),
      ...(f.badEnum ? [make(f.badEnum, 'unknown enum value')] : []),
    ]
  }),
)
