import { hostOf } from '@colloquy/core/host'
import { createStore, memoryStorage, type ReplicaChange, type Store } from '@colloquy/core'
import { parseReplicaChange } from '@colloquy/core/replica'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parsePush, push } from '../src/http/push.js'
import type { Scope } from '../src/http/access.js'
import { Tenancy } from '../src/tenancy.js'

/** The local user's scope (no tokens): every session, granted explicitly. */
const ALL: Scope = { kind: 'all', grant: 'local' }

// Every call of core's one replica-change validator, wherever it comes from (the server's
// `parsePush`, core's `applyReplica`): the original runs, so results are unchanged.
vi.mock('../../core/src/validation/records.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../core/src/validation/records.js')>()
  return { ...original, replicaChange: vi.fn(original.replicaChange) }
})
const records = await import('../../core/src/validation/records.js')
const validations = (): number => vi.mocked(records.replicaChange).mock.calls.length

const meta = (session_id: string) => ({ session_id, title: session_id, created_at: 1, updated_at: 1 })
const message = (i: number) => ({
  role: 'user',
  content: [{ type: 'text', text: `message ${i}` }],
  timestamp: i,
})
const append = (session_id: string, i: number): unknown[] => [
  {
    id: 2 * i + 1,
    change: {
      type: 'entry',
      session_id,
      entry: {
        id: `e${i}`,
        parent_id: i ? `e${i - 1}` : null,
        timestamp: i,
        kind: 'message',
        message: message(i),
      },
    },
  },
  { id: 2 * i + 2, change: { type: 'leaf', session_id, entry_id: `e${i}` } },
]

let store: Store
beforeEach(async () => {
  store = await createStore({ storage: memoryStorage(), multiTab: false })
})
afterEach(async () => {
  await store.close()
  vi.mocked(records.replicaChange).mockClear()
})
const service = () => ({ store, tenancy: new Tenancy(hostOf(store)) })

describe('a push is validated once', () => {
  it('applyReplica takes the changes parsePush checked without validating them again', async () => {
    await push(
      service(),
      ALL,
      parsePush({ mutations: [{ id: 0, change: { type: 'meta', create: true, meta: meta('s') } }] }, 10),
    )
    vi.mocked(records.replicaChange).mockClear()
    const mutations = parsePush({ mutations: append('s', 0) }, 10)
    expect(validations()).toBe(2)
    const results = await push(service(), ALL, mutations)
    expect(results.map((r) => r.status)).toEqual(['applied', 'applied'])
    expect(validations()).toBe(2)
    expect(store.engine.state.sessions.get('s')?.head.leaf).toBe('e0')
  })

  it('a checked change is frozen: the object applyReplica trusts cannot be changed after its check', () => {
    const change = parseReplicaChange({ type: 'leaf', session_id: 's', entry_id: 'e0' }, 'c') as {
      session_id: string
    }
    expect(Object.isFrozen(change)).toBe(true)
    expect(() => {
      change.session_id = '../other'
    }).toThrow(TypeError)
  })

  it('a copy, a cast or a look-alike of a checked change is validated again, and bad ones are refused', async () => {
    await store.applyReplica([parseReplicaChange({ type: 'meta', create: true, meta: meta('s') }, 'c')], {
      policy: 'push',
    })
    const checked = parseReplicaChange({ type: 'leaf', session_id: 's', entry_id: null }, 'c')
    vi.mocked(records.replicaChange).mockClear()
    // A spread copy keeps the brand's type (a cast), not the validator's mark.
    await store.applyReplica([{ ...checked }], { policy: 'push' })
    expect(validations()).toBe(1)
    const forged = {
      type: 'entry',
      session_id: 's',
      entry: { id: 'x', parent_id: null, timestamp: 1, kind: 'message', message: { role: 'nobody' } },
    } as unknown as ReplicaChange
    await expect(store.applyReplica([forged], { policy: 'push' })).rejects.toMatchObject({
      code: 'session/invalid_request',
    })
    expect(validations()).toBe(2)
    expect(store.engine.state.sessions.get('s')?.head.meta.message_count).toBe(0)
  })

  it('a meta the server stamps with its owner (a new object) passes the validator again', async () => {
    const tenancy = new Tenancy(hostOf(store))
    const mutations = parsePush(
      {
        mutations: [
          { id: 0, change: { type: 'meta', create: true, meta: meta('mine') } },
          ...append('mine', 0),
        ],
      },
      10,
    )
    vi.mocked(records.replicaChange).mockClear()
    const results = await push({ store, tenancy }, { kind: 'owner', owner: 'alice' }, mutations)
    expect(results.map((r) => r.status)).toEqual(['applied', 'applied', 'applied'])
    // Only the stamped meta: the entry and the leaf were taken as parsed.
    expect(validations()).toBe(1)
    expect(store.engine.state.sessions.get('mine')?.head.meta.metadata).toEqual({ owner: 'alice' })
  })

  it('every rejection a push got before still comes, from parsePush or the replica rules', async () => {
    expect(() =>
      parsePush({ mutations: [{ id: 1, change: { type: 'leaf', session_id: 42, entry_id: null } }] }, 10),
    ).toThrow(/mutations\[0\]\.change\.session_id/)
    expect(() =>
      parsePush(
        {
          mutations: [
            { id: 1, change: { type: 'entry', session_id: 's', entry: { id: 'e', kind: 'message' } } },
          ],
        },
        10,
      ),
    ).toThrow(/timestamp|message/)
    const results = await push(service(), ALL, parsePush({ mutations: append('absent', 0) }, 10))
    expect(results.map((r) => (r.status === 'rejected' ? r.code : r.status))).toEqual([
      'session/not_found',
      'session/not_found',
    ])
  })
})
