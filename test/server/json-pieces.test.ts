import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import {
  checkJsonShape,
  DEFAULT_JSON_LIMITS,
  parseJson,
  parseJsonInSlices,
  type JsonLimits,
} from '../../packages/server/src/http/json-limits.js'
import { parseInPieces } from '../../packages/server/src/http/json-pieces.js'
import { readInOrder, readMessage, type ReadMessage } from '../../packages/server/src/http/ws-json.js'
import { WORK_BUDGETS } from '../../packages/server/src/work.js'

type Outcome = { value: unknown } | { status: number; code: string; message: string }

const outcome = async (parse: () => unknown): Promise<Outcome> => {
  try {
    return { value: await parse() }
  } catch (e) {
    const { status, code, message } = e as { status: number; code: string; message: string }
    return { status, code, message }
  }
}

/** Two parsed values are the same: same prototypes, same own keys in the same order, same values (`Object.is`). */
function same(a: unknown, b: unknown, at = '$'): void {
  if (typeof a !== 'object' || a === null) {
    if (!Object.is(a, b)) throw new Error(`${at}: ${String(a)} ≠ ${String(b)}`)
    return
  }
  if (typeof b !== 'object' || b === null) throw new Error(`${at}: object ≠ ${String(b)}`)
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) throw new Error(`${at}: prototypes differ`)
  const ka = Reflect.ownKeys(a)
  const kb = Reflect.ownKeys(b)
  if (ka.join('\u0000') !== kb.join('\u0000')) throw new Error(`${at}: keys ${ka.join()} ≠ ${kb.join()}`)
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k)!
    const db = Object.getOwnPropertyDescriptor(b, k)!
    if (da.enumerable !== db.enumerable || da.writable !== db.writable || da.configurable !== db.configurable)
      throw new Error(`${at}.${String(k)}: descriptors differ`)
    same(da.value, db.value, `${at}.${String(k)}`)
  }
}

/** The sliced parse answers what the one-pass parse answers: the same value, or the same refusal. */
function expectSame(sliced: Outcome, onePass: Outcome): void {
  if ('value' in onePass) {
    expect('value' in sliced ? 'accepted' : (sliced as { message: string }).message).toBe('accepted')
    same((sliced as { value: unknown }).value, onePass.value)
    return
  }
  expect('value' in sliced).toBe(false)
  const s = sliced as { status: number; code: string; message: string }
  expect([s.status, s.code]).toStrictEqual([onePass.status, onePass.code])
  expect([s.status, s.code]).toStrictEqual([400, 'session/invalid_request'])
  // A shape violation reads the same; a syntax error names where, in its own words, and carries no stack.
  if (onePass.message.startsWith('session/invalid_request: malformed JSON'))
    expect(s.message).toMatch(/^session\/invalid_request: malformed JSON/)
  else expect(s.message).toBe(onePass.message)
  expect(s.message).not.toMatch(/\n\s+at |\/work\/|node_modules/)
}

const limits: JsonLimits = { maxDepth: 8, maxArrayLength: 20, maxObjectKeys: 12, maxStringLength: 60 }
/** The shape check, then `parseInPieces` with pieces of `piece` characters, as `parseJsonInSlices` runs them. */
const inPieces = (text: string, piece: number) => async () => {
  checkJsonShape(text, limits)
  return parseInPieces(text, piece, async () => {})
}

/** Keys a hostile sender would try. */
const hostileKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '0',
  '1',
  '10',
  '-1',
  'a',
)
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -0, 1e308, -1.5e-7, 1.2345678901234568e29),
    fc.double(),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.array(fc.tuple(fc.oneof(hostileKey, fc.string({ maxLength: 6 })), tie('value')), { maxLength: 6 }),
  ),
})).value

/** JSON text of a value, with hostile object keys written as pairs (so repeated keys and `__proto__` stay in the text). */
const textOf = (v: unknown, space: string): string => {
  if (
    Array.isArray(v) &&
    v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string') &&
    v.length
  )
    return `{${space}${(v as [string, unknown][])
      .map(([k, x]) => `${JSON.stringify(k)}${space}:${space}${textOf(x, space)}`)
      .join(`,${space}`)}${space}}`
  if (Array.isArray(v)) return `[${space}${v.map((x) => textOf(x, space)).join(`,${space}`)}${space}]`
  return JSON.stringify(v) ?? 'null'
}

/** Ways a body goes wrong: cut short, a character replaced or inserted, text after the value. */
const hostile = (text: string) =>
  fc.oneof(
    fc.constant(text),
    fc.nat(text.length).map((n) => text.slice(0, n)),
    fc
      .tuple(fc.nat(text.length), fc.constantFrom(...'{}[]:,"\\ \t\n\r0-e.tfnx\u00a0\ufeff'))
      .map(([n, c]) => text.slice(0, n) + c + text.slice(n + 1)),
    fc
      .tuple(fc.nat(text.length), fc.constantFrom(...'{}[]:,"\\ 0-e.tfnx\u2028'))
      .map(([n, c]) => text.slice(0, n) + c + text.slice(n)),
    fc.constantFrom(' x', ' 1', ',', ']', '}', ' {}', '""').map((tail) => text + tail),
  )

describe('a body parsed in pieces is the one-pass parse, value for value and refusal for refusal', () => {
  it('on valid and hostile texts, with pieces of every size', async () => {
    await fc.assert(
      fc.asyncProperty(
        value
          .chain((v) => fc.constantFrom('', ' ', '\n\t ').map((space) => textOf(v, space)))
          .chain((text) => hostile(text)),
        fc.integer({ min: 1, max: 80 }),
        async (text, piece) => {
          expectSame(await outcome(inPieces(text, piece)), await outcome(() => parseJson(text, limits)))
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('keeps JSON.parse’s own keys: __proto__ is data, a repeated key keeps its first place and last value', async () => {
    const text = '{"b":1,"__proto__":{"polluted":true},"a":[{"__proto__":[]}],"b":2,"10":0,"2":0}'
    const v = (await inPieces(text, 1)()) as Record<string, unknown>
    same(v, JSON.parse(text))
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
    expect(Object.keys(v)).toStrictEqual(['2', '10', 'b', '__proto__', 'a'])
    expect(v.b).toBe(2)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('a large body through parseJsonInSlices: the same value, and every limit refused as the one-pass parse refuses it', async () => {
    const mutation = (i: number) => ({
      type: 'entry',
      session_id: `s${i % 7}`,
      entry: {
        id: `e${i}`,
        parent_id: null,
        kind: 'message',
        message: { content: [{ type: 'text', text: 'x'.repeat(i % 300) }] },
      },
    })
    const big = JSON.stringify({
      mutations: Array.from({ length: 1500 }, (_, i) => mutation(i)),
      __proto__x: 1,
    })
    expect(big.length).toBeGreaterThan(8 * WORK_BUDGETS.sliceChars)
    const bodies = [
      big,
      big.replace('"__proto__x"', '"__proto__"'),
      big.slice(0, -1),
      big.slice(0, big.length >> 1),
      `${big} x`,
      big.replace('"e700"', '"e700\\u00"'),
      big.replace('"e900"', 'e900'),
      big.replace('"s3"', '"s3",'),
      `[${big},${'['.repeat(70)}${']'.repeat(70)}]`,
      `[${big},"${'y'.repeat(DEFAULT_JSON_LIMITS.maxStringLength + 1)}"]`,
      `{"a":${big},"a":${big.replace('"e1"', '"e1b"')}}`,
    ]
    for (const text of bodies)
      expectSame(
        await outcome(() => parseJsonInSlices(text, DEFAULT_JSON_LIMITS)),
        await outcome(() => parseJson(text, DEFAULT_JSON_LIMITS)),
      )
  })
})

/** Counts turns of the event loop (setImmediate callbacks that ran) while `work` is pending. */
async function turnsDuring(work: () => Promise<unknown>): Promise<{ turns: number; value: unknown }> {
  let turns = 0
  let done = false
  const tick = (): void => {
    if (done) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  try {
    const value = await work()
    return { turns, value }
  } finally {
    done = true
  }
}

describe('a large body or WebSocket frame is parsed across turns of the event loop', () => {
  // 1 MiB-ish of push-like JSON: 2,000 mutations of about 500 characters.
  const body = JSON.stringify({
    mutations: Array.from({ length: 2000 }, (_, i) => ({
      type: 'entry',
      session_id: `s${i}`,
      entry: { id: `e${i}`, text: 'the quick brown fox jumps over the lazy dog '.repeat(10) },
    })),
  })
  const slices = Math.floor(body.length / WORK_BUDGETS.sliceChars)

  it('parseInPieces turns once per slice of characters parsed', async () => {
    let pauses = 0
    const value = await parseInPieces(body, WORK_BUDGETS.sliceChars, async () => void pauses++)
    same(value, JSON.parse(body))
    expect(pauses).toBeGreaterThanOrEqual(slices)
    expect(pauses).toBeLessThanOrEqual(slices + 4)
  })

  it('no turn gives the native parser more than a slice, whatever the members’ sizes', async () => {
    const zeros = JSON.stringify(Array.from({ length: 20 }, () => new Array(100_000).fill(0)))
    const keys = JSON.stringify(
      Array.from({ length: 40 }, () =>
        Object.fromEntries(Array.from({ length: 10_000 }, (_, k) => [k.toString(36), k])),
      ),
    )
    const mixed = JSON.stringify({
      a: [body.slice(0, 30_000), ...new Array(5000).fill({ b: 'c'.repeat(40) })],
      d: JSON.parse(body),
    })
    for (const text of [body, zeros, keys, mixed]) {
      const native = JSON.parse
      let inTurn = 0
      let most = 0
      let total = 0
      const spy = vi.spyOn(JSON, 'parse').mockImplementation((t: string) => {
        inTurn += t.length
        total += t.length
        most = Math.max(most, inTurn)
        return native(t)
      })
      try {
        same(await parseInPieces(text, WORK_BUDGETS.sliceChars, async () => void (inTurn = 0)), native(text))
      } finally {
        spy.mockRestore()
      }
      // Plus the two brackets around each run of members, the parser's own: a turn holds more
      // than one run only where a walked container ends, at most one per level of nesting.
      expect(most).toBeLessThanOrEqual(WORK_BUDGETS.sliceChars + 2 * DEFAULT_JSON_LIMITS.maxDepth)
      expect(most).toBeGreaterThan(WORK_BUDGETS.sliceChars / 2)
      expect(total).toBeLessThan(text.length * 1.01)
    }
  })

  it('a request body: the shape check turns once per slice, and so does the parse after it', async () => {
    const r = await turnsDuring(() => parseJsonInSlices(body, DEFAULT_JSON_LIMITS))
    same(r.value, JSON.parse(body))
    // The shape check alone gives about `slices` turns; one JSON.parse after it would add none.
    expect(r.turns).toBeGreaterThanOrEqual(2 * slices - 2)
  })

  it('a WebSocket frame is read across turns too', async () => {
    const { turns } = await turnsDuring(async () => {
      const read = await readMessage(body, DEFAULT_JSON_LIMITS)
      expect('msg' in read && (read.msg.mutations as unknown[]).length).toBe(2000)
    })
    expect(turns).toBeGreaterThanOrEqual(2 * slices - 2)
  })

  it('a socket’s frames are handled in the order they came, a large one read in slices before a small one after it', async () => {
    const handled: string[] = []
    let last!: () => void
    const allDone = new Promise<void>((resolve) => (last = resolve))
    const onMessage = readInOrder<string>(
      DEFAULT_JSON_LIMITS,
      (read: ReadMessage, ws) => {
        handled.push(`${ws}:${'msg' in read ? String(read.msg.type) : read.refused.code}`)
        if (ws === 'last') last()
      },
      (e) => handled.push(`failed ${String(e)}`),
    )
    onMessage({ data: body.replace('{', '{"type":"big",') }, 'first')
    onMessage({ data: '{"type":"ping"}' }, 'second')
    onMessage({ data: '{"type":' }, 'third')
    onMessage({ data: '{"type":"ping"}' }, 'last')
    await allDone
    expect(handled).toStrictEqual(['first:big', 'second:ping', 'third:session/invalid_request', 'last:ping'])
  })
})
