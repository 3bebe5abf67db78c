import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type ReplicaChange, type Storage } from '../src/index.js'

// `applyReplica`'s `turn`: a large replication (a server's 1 MB push) applied in slices, the
// event loop turning between them, still one transaction: everything or nothing commits, and
// nothing of it is seen before it does. Counted in turns and held promises, never timed.

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

/** `count` messages in one chain on `session_id`, then the leaf on the last. */
function chain(session_id: string, count: number): ReplicaChange[] {
  const out: ReplicaChange[] = []
  for (let i = 0; i < count; i++) {
    const entry = {
      id: `m${i}`,
      parent_id: i ? `m${i - 1}` : null,
      timestamp: 1,
      revision: 0,
      kind: 'message' as const,
      message: { role: 'user' as const, content: [{ type: 'text' as const, text: `m${i}` }], timestamp: 1 },
    }
    out.push({ type: 'entry', session_id, base_revision: null, entry })
  }
  out.push({ type: 'leaf', session_id, entry_id: `m${count - 1}` })
  return out
}

/** A turn that holds the apply after its `at`-th change until `release`. */
function heldTurn(at: number) {
  let calls = 0
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let reached = false
  return {
    turn: (): Promise<void> | undefined =>
      ++calls === at ? ((reached = true), held) : calls % 4 === 0 ? turns(1) : undefined,
    get reached() {
      return reached
    },
    get calls() {
      return calls
    },
    release: () => release(),
  }
}

async function open(storage: Storage = memoryStorage()) {
  const store = await createStore({ storage, multiTab: false, now: () => 1_000_000 })
  await store.ensure({ session_id: 'alice' })
  await store.ensure({ session_id: 'bob' })
  // The replica code is fetched on first use: fetched now, so the turns counted are the apply's.
  await store.applyReplica([], { policy: 'push' })
  return store
}

describe('applyReplica in turns', () => {
  it('commits every change at once, after the last turn; meanwhile other sessions are read and nothing of it is seen', async () => {
    const store = await open()
    // What a live query of alice's session shows: her message count at each change it emits.
    const seen: Array<number | undefined> = []
    const sub = store.session$('alice').subscribe((m) => seen.push(m?.message_count))
    await turns(2)
    expect(seen).toStrictEqual([0])
    const h = heldTurn(10)
    const changes = chain('alice', 20)
    let done = false
    const applied = store.applyReplica(changes, { policy: 'push', turn: h.turn }).finally(() => (done = true))
    for (let i = 0; i < 100 && !h.reached; i++) await turns(1)
    expect(h.reached).toBe(true)
    // Held mid-apply: another session's read answers, and nothing of the replication is out.
    expect((await store.get({ session_id: 'bob' }))?.meta.session_id).toBe('bob')
    expect(done).toBe(false)
    expect(seen).toStrictEqual([0])
    h.release()
    const results = await applied
    await turns(2)
    // One step from none of it to all of it.
    expect(seen).toStrictEqual([0, 20])
    sub.unsubscribe()
    // Every change was applied, in one commit: the same answers as applying them in one go.
    expect(h.calls).toBe(changes.length)
    const plain = await open()
    expect(results).toStrictEqual(await plain.applyReplica(changes, { policy: 'push' }))
    expect(results.every((r) => r.status === 'applied')).toBe(true)
    const messages = (await store.messages({ session_id: 'alice' })).messages.map((m) => m.entry_id)
    expect(messages).toStrictEqual(changes.slice(0, -1).map((c) => (c.type === 'entry' ? c.entry.id : '')))
    await Promise.all([store.close(), plain.close()])
  })

  it('writes none of it when the transaction fails after the turns', async () => {
    const inner = memoryStorage()
    let fail = false
    const storage: Storage = {
      ...inner,
      transact: (work) =>
        inner.transact(async (reader) => {
          const writes = await work(reader)
          if (fail) throw new Error('disk full')
          return writes
        }),
    }
    const store = await open(storage)
    fail = true
    const h = heldTurn(3)
    const applied = store.applyReplica(chain('alice', 12), { policy: 'push', turn: h.turn })
    for (let i = 0; i < 100 && !h.reached; i++) await turns(1)
    expect(h.reached).toBe(true)
    h.release()
    await expect(applied).rejects.toMatchObject({ code: 'session/storage' })
    fail = false
    expect((await store.messages({ session_id: 'alice' })).messages).toStrictEqual([])
    expect((await store.get({ session_id: 'alice' }))?.meta.message_count).toBe(0)
    // A store opened afresh on the same storage finds nothing of it either.
    const again = await createStore({ storage, multiTab: false, now: () => 1_000_000 })
    expect((await again.messages({ session_id: 'alice' })).messages).toStrictEqual([])
    await Promise.all([store.close(), again.close()])
  })
})
