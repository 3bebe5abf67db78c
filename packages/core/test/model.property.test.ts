import 'fake-indexeddb/auto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createStore,
  indexedDbStorage,
  memoryStorage,
  ORDERS,
  type AgentMessage,
  type SessionKind,
  type SessionStatus,
  type Storage,
  type Store,
} from '../src/index.js'
import { ReferenceModel, type Outcome } from './reference-model.js'

// Random operation sequences against the store and the reference model; after every step the
// whole observable state must agree. Picks are indices resolved against the model at run time,
// so shrinking keeps sequences meaningful (an index past the end means an unknown id).
type Op = { tick: number } & (
  | { t: 'create'; title?: string; owner?: string; kind?: SessionKind }
  | {
      t: 'append'
      s: number
      text: string
      custom: boolean
      parent: number | null
      entry: 'none' | 'fresh' | number
      origin: boolean
    }
  | { t: 'appendMany'; s: number; n: number; parent: number | null }
  | { t: 'burst'; s: number; n: number }
  | { t: 'update'; s: number; e: number; text: string; expected: 'none' | 'current' | 'stale' }
  | { t: 'setLeaf'; s: number; e: number }
  | { t: 'setStatus'; s: number; status: SessionStatus; reason?: string }
  | { t: 'setMeta'; s: number; title?: string; owner?: string }
  | { t: 'delete'; s: number }
  | { t: 'fork'; s: number; e: number; title?: string }
)

// Mostly an existing session or entry; now and then -1 (an unknown id) or -2 (a deleted session).
const pick = fc.oneof({ weight: 10, arbitrary: fc.nat({ max: 12 }) }, fc.constant(-1), fc.constant(-2))
const word = fc.constantFrom('a', 'b', 'hello', '')
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })
const tick = fc.constantFrom(0, 0, 1, 7)

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record(
      {
        t: fc.constant('create' as const),
        tick,
        title: opt(word),
        owner: opt(fc.constantFrom('u_1', 'u_2')),
        kind: opt(fc.constantFrom<SessionKind>('user', 'e2e')),
      },
      { requiredKeys: ['t', 'tick'] },
    ),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('append' as const),
      tick,
      s: pick,
      text: word,
      custom: fc.boolean(),
      parent: fc.option(pick, { nil: null, freq: 2 }),
      entry: fc.oneof(fc.constant('none' as const), fc.constant('fresh' as const), pick),
      origin: fc.boolean(),
    }),
  },
  fc.record({
    t: fc.constant('appendMany' as const),
    tick,
    s: pick,
    n: fc.nat({ max: 3 }),
    parent: fc.option(pick, { nil: null, freq: 2 }),
  }),
  fc.record({ t: fc.constant('burst' as const), tick, s: pick, n: fc.integer({ min: 2, max: 4 }) }),
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('update' as const),
      tick,
      s: pick,
      e: pick,
      text: word,
      expected: fc.constantFrom('none' as const, 'current' as const, 'stale' as const),
    }),
  },
  fc.record({ t: fc.constant('setLeaf' as const), tick, s: pick, e: pick }),
  fc.record(
    {
      t: fc.constant('setStatus' as const),
      tick,
      s: pick,
      status: fc.constantFrom<SessionStatus>('idle', 'working', 'done', 'error'),
      reason: opt(fc.constantFrom('x', 'y')),
    },
    { requiredKeys: ['t', 'tick', 's', 'status'] },
  ),
  fc.record(
    {
      t: fc.constant('setMeta' as const),
      tick,
      s: pick,
      title: opt(word),
      owner: opt(fc.constantFrom('u_1', 'u_2')),
    },
    { requiredKeys: ['t', 'tick', 's'] },
  ),
  { weight: 1, arbitrary: fc.record({ t: fc.constant('delete' as const), tick, s: pick }) },
  fc.record(
    { t: fc.constant('fork' as const), tick, s: pick, e: pick, title: opt(word) },
    { requiredKeys: ['t', 'tick', 's', 'e'] },
  ),
)

const msg = (text: string, i: number): AgentMessage =>
  i % 2 === 0
    ? { role: 'user', content: [{ type: 'text', text }], timestamp: 0 }
    : {
        role: 'assistant',
        content: [{ type: 'text', text }],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: 0,
      }

const outcome = <T>(p: Promise<T>): Promise<Outcome<T>> =>
  p.then(
    (ok) => ({ ok }),
    (e: unknown) => ({ error: (e as { code?: string }).code ?? String(e) }),
  )

async function runSequence(storage: Storage, ops: Op[]): Promise<void> {
  const model = new ReferenceModel()
  const ids = { session: 0, entry: 0, attachment: 0 }
  const store: Store = await createStore({
    storage,
    multiTab: false,
    now: () => model.now,
    newId: (k) => `${k[0]}_${String(++ids[k]).padStart(3, '0')}`,
  })
  const seen = new Map<string, number>()
  let explicit = 0
  try {
    for (const [step, op] of ops.entries()) {
      model.now += op.tick
      const live = [...model.sessions.keys()]
      const gone = [...model.everCreated].filter((id) => !model.sessions.has(id))
      const sid = !('s' in op)
        ? 'ghost'
        : op.s >= 0
          ? (live[op.s % live.length] ?? 'ghost')
          : op.s === -2
            ? (gone[0] ?? 'ghost')
            : 'ghost'
      const entries = [...(model.sessions.get(sid)?.entries.keys() ?? [])]
      const eid = (i: number): string => (i >= 0 && entries[i % entries.length]) || 'ghost'
      const check = async <T>(expected: Outcome<T>, actual: Promise<T>): Promise<void> => {
        expect(await outcome(actual), `step ${step}: ${JSON.stringify(op)}`).toStrictEqual(expected)
      }
      switch (op.t) {
        case 'create': {
          const req = {
            ...(op.title !== undefined && { title: op.title }),
            ...(op.owner && { metadata: { owner: op.owner } }),
            ...(op.kind && { kind: op.kind }),
          }
          await check(model.create(req), store.create(req))
          break
        }
        case 'append': {
          const entry_id =
            op.entry === 'none' ? undefined : op.entry === 'fresh' ? `x_${++explicit}` : eid(op.entry)
          const req = {
            session_id: sid,
            ...(op.custom
              ? { custom: { custom_type: 'note', data: { text: op.text } } }
              : { message: msg(op.text, step) }),
            ...(op.parent !== null && { parent_id: eid(op.parent) }),
            ...(entry_id !== undefined && { entry_id }),
            ...(op.origin && { origin: { turn_id: `t_${step}` } }),
          }
          await check(model.append(req), store.append(req))
          break
        }
        case 'appendMany': {
          const req = {
            session_id: sid,
            messages: Array.from({ length: op.n }, (_, i) => msg(`m${i}`, i)),
            ...(op.parent !== null && { parent_id: eid(op.parent) }),
          }
          await check(model.appendMany(req), store.appendMany(req))
          break
        }
        case 'burst': {
          // Issued in one tick: one group commit, and still a chain in issue order.
          const reqs = Array.from({ length: op.n }, (_, i) => ({
            session_id: sid,
            message: msg(`burst ${i}`, i),
          }))
          const actual = reqs.map((r) => outcome(store.append(r)))
          const expected = reqs.map((r) => model.append(r))
          expect(await Promise.all(actual), `step ${step}: ${JSON.stringify(op)}`).toStrictEqual(expected)
          break
        }
        case 'update': {
          const entry_id = eid(op.e)
          const current = model.sessions.get(sid)?.entries.get(entry_id)?.revision ?? 0
          const expected_revision =
            op.expected === 'none' ? undefined : op.expected === 'current' ? current : current + 1
          const req = {
            session_id: sid,
            entry_id,
            content: [{ type: 'text' as const, text: op.text }],
            ...(expected_revision !== undefined && { expected_revision }),
          }
          await check(model.updateMessage(req), store.updateMessage(req))
          break
        }
        case 'setLeaf': {
          const req = { session_id: sid, entry_id: eid(op.e) }
          await check(model.setActiveLeaf(req), store.setActiveLeaf(req))
          break
        }
        case 'setStatus': {
          const req = {
            session_id: sid,
            status: op.status,
            ...(op.reason !== undefined && { reason: op.reason }),
          }
          await check(model.setStatus(req), store.setStatus(req))
          break
        }
        case 'setMeta': {
          const req = {
            session_id: sid,
            ...(op.title !== undefined && { title: op.title }),
            ...(op.owner && { metadata: { owner: op.owner } }),
          }
          await check(model.setMeta(req), store.setMeta(req))
          break
        }
        case 'delete':
          await check(model.delete({ session_id: sid }), store.delete({ session_id: sid }))
          break
        case 'fork': {
          const req = {
            session_id: sid,
            entry_id: eid(op.e),
            ...(op.title !== undefined && { title: op.title }),
          }
          await check(model.fork(req), store.fork(req))
          break
        }
      }
      await agree(store, model, seen, `after step ${step}: ${JSON.stringify(op)}`)
    }
  } finally {
    await store.close()
  }
}

/** The whole observable state equals the model's; revisions never went down. */
async function agree(
  store: Store,
  model: ReferenceModel,
  seen: Map<string, number>,
  where: string,
): Promise<void> {
  for (const id of model.everCreated) {
    const s = model.sessions.get(id)
    const got = await store.get({ session_id: id })
    if (!s) {
      expect(got, `${where}: ${id} deleted`).toBeNull()
      continue
    }
    // The meta carries message_count, updated_at, status and reason.
    expect(got, `${where}: meta of ${id}`).toStrictEqual({ meta: s.meta })
    const page = await store.messages({ session_id: id, include_custom: true, limit: 500 })
    expect(page, `${where}: active path of ${id}`).toStrictEqual({ messages: model.items(id) })
    for (const e of s.entries.values()) {
      const read = await store.getMessage({ session_id: id, entry_id: e.id })
      expect(read, `${where}: entry ${id}/${e.id}`).toStrictEqual({ entry: e })
      const key = `${id}/${e.id}`
      expect(read!.entry.revision, `${where}: revision of ${key} went down`).toBeGreaterThanOrEqual(
        seen.get(key) ?? 0,
      )
      seen.set(key, read!.entry.revision)
    }
  }
  for (const order of ORDERS) {
    const { sessions } = await store.list({ order, limit: 500 })
    expect(
      sessions.map((m) => m.session_id),
      `${where}: list ${order}`,
    ).toStrictEqual(model.list(order))
  }
}

// A session exists from the first step, so most operations hit something.
const createFirst = fc.record({ t: fc.constant('create' as const), tick: fc.constant(0) }) as fc.Arbitrary<Op>
const sequences = fc
  .tuple(createFirst, fc.array(opArb, { minLength: 5, maxLength: 40, size: 'max' }))
  .map(([first, rest]) => [first, ...rest])
const runs = { numRuns: 100 }
let db = 0

describe('store agrees with the reference model', () => {
  it('over memoryStorage', async () => {
    await fc.assert(
      fc.asyncProperty(sequences, (ops) => runSequence(memoryStorage(), ops)),
      runs,
    )
  })

  it('over fake-indexeddb', async () => {
    await fc.assert(
      fc.asyncProperty(sequences, (ops) =>
        runSequence(indexedDbStorage({ name: `model-${process.pid}-${++db}` }), ops),
      ),
      runs,
    )
  })
})
