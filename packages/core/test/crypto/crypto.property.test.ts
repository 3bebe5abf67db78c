import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { SessionError, type SessionEntry } from '../../src/index.js'
import { parseSessionEntry } from '../../src/wire.js'
import { Keyring, openEntry, sealEntry } from '../../src/crypto/index.js'

// Random entries of every kind: each opens as sealed (through JSON), holds none of its text in
// the stored form, and opens nowhere else (another session, id, revision, parent or role).

const MARK = 'Qv8marker'
const text = fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => `${s}${MARK}`)
const ident = fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/)
const json = fc.jsonValue({ maxDepth: 3 })

const leafBlock = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record({ type: fc.constant('thinking'), text, signature: fc.option(text, { nil: undefined }) }),
  fc.record({
    type: fc.constant('image'),
    mime: fc.constant('image/png'),
    data: fc.base64String(),
    attachment_id: fc.option(ident, { nil: undefined }),
  }),
  fc.record({
    type: fc.constant('file'),
    attachment_id: ident,
    name: text,
    mime: fc.constant('text/plain'),
    size: fc.nat(),
  }),
  fc.record({ type: fc.constant('function_call'), id: ident, function_id: ident, arguments: json }),
)
const block = fc.oneof(
  { weight: 4, arbitrary: leafBlock },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('function_result'),
      function_call_id: ident,
      content: fc.array(leafBlock, { maxLength: 3 }),
      is_error: fc.boolean(),
    }),
  },
)
const content = fc.array(block, { minLength: 1, maxLength: 4 })
const time = fc.integer({ min: 0, max: 2 ** 45 })

const message = fc.oneof(
  fc.record({ role: fc.constant('user'), content, timestamp: time }),
  fc.record(
    {
      role: fc.constant('assistant'),
      content,
      timestamp: time,
      stop_reason: fc.constantFrom('end', 'length', 'function_call', 'aborted', 'error'),
      model: text,
      provider: text,
      error_message: text,
      warnings: fc.array(text, { maxLength: 2 }),
      usage: fc.record({ input: fc.nat(), output: fc.nat() }),
    },
    { requiredKeys: ['role', 'content', 'timestamp', 'stop_reason', 'model', 'provider'] },
  ),
  fc.record({
    role: fc.constant('function_result'),
    function_call_id: ident,
    function_id: ident,
    content,
    timestamp: time,
    details: json,
    is_error: fc.boolean(),
  }),
  fc.record({ role: fc.constant('custom'), custom_type: text, content, timestamp: time, display: text }),
)

const entry = fc
  .record({
    id: ident,
    parent_id: fc.option(ident, { nil: null }),
    timestamp: time,
    revision: fc.nat({ max: 1000 }),
    origin: fc.option(fc.record({ turn: text }), { nil: undefined }),
    body: fc.oneof(
      message.map((m) => ({ kind: 'message', message: m })),
      fc.record({ kind: fc.constant('custom'), custom_type: text, data: fc.oneof(json, text) }),
    ),
  })
  .map(({ body, origin, ...rest }) => {
    const raw = { ...rest, ...(origin && { origin }), ...body }
    // The store's own validator, so the entry is one a store would seal (defaults filled).
    return parseSessionEntry(JSON.parse(JSON.stringify(raw)), 'entry')
  })

describe('sealed entries (property)', () => {
  let ring: Keyring
  beforeAll(async () => {
    ring = await Keyring.create({ passphrase: 'property' })
  })

  it('open as sealed, leak no text, and open nowhere else', async () => {
    await fc.assert(
      fc.asyncProperty(
        entry,
        fc.constantFrom('session', 'id', 'revision', 'parent', 'role'),
        async (e: SessionEntry, moved) => {
          const sealed = JSON.parse(JSON.stringify(await sealEntry(ring, 's_prop', e)))
          expect(await openEntry(ring, 's_prop', sealed)).toEqual(e)
          expect(JSON.stringify(sealed)).not.toContain(MARK)
          const elsewhere =
            moved === 'session'
              ? openEntry(ring, 's_elsewhere', sealed)
              : moved === 'id'
                ? openEntry(ring, 's_prop', { ...sealed, id: `${e.id}x` })
                : moved === 'revision'
                  ? openEntry(ring, 's_prop', { ...sealed, revision: e.revision + 1 })
                  : moved === 'parent'
                    ? openEntry(ring, 's_prop', {
                        ...sealed,
                        parent_id: e.parent_id === null ? 'e_root' : null,
                      })
                    : openEntry(ring, 's_prop', {
                        ...sealed,
                        role: e.kind === 'message' && e.message.role === 'user' ? 'assistant' : 'user',
                        kind: 'message',
                      })
          const error = await elsewhere.then(
            () => undefined,
            (x: unknown) => x,
          )
          expect(error).toBeInstanceOf(SessionError)
          expect((error as SessionError).code).toBe('session/integrity')
        },
      ),
      { numRuns: 300 },
    )
  })
})
