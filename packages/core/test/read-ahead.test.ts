import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type ReplicaChange, type Storage, type Store } from '../src/index.js'
import { operations } from '../src/ops/index.js'

// A read of one session is answered from the committed state while other sessions' writes are
// committing (one principal's large push on a server must not hold another's reads), and still
// in issue order with every write that may touch its session. Counted in turns of the event
// loop with every commit held, never timed.

/** A memory storage (unordered, as the server's are) whose commits wait until `release`. */
function heldStorage() {
  const inner = memoryStorage()
  let release!: () => void
  let held = new Promise<void>((r) => (release = r))
  let commits = 0
  const storage: Storage = {
    ...inner,
    name: 'held',
    transact: (work) =>
      inner.transact(async (reader) => {
        const writes = await work(reader)
        await held
        commits++
        return writes
      }),
  }
  return {
    storage,
    get commits() {
      return commits
    },
    hold(): void {
      held = new Promise<void>((r) => (release = r))
    },
    release: () => release(),
  }
}

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

/** Settles into `out` (the call's answer, or its error code), for counting what answered. */
function track<T>(p: Promise<T>): { done: boolean; value?: T } {
  const out: { done: boolean; value?: T } = { done: false }
  p.then(
    (v) => Object.assign(out, { done: true, value: v }),
    (e: { code?: string }) => Object.assign(out, { done: true, value: e.code }),
  )
  return out
}

/** A pushed message on `parent`, made the session's leaf. */
const message = (session_id: string, id: string, parent: string | null = null): ReplicaChange[] => [
  {
    type: 'entry',
    session_id,
    base_revision: null,
    entry: {
      id,
      parent_id: parent,
      timestamp: 1,
      revision: 0,
      kind: 'message',
      message: { role: 'user', content: [{ type: 'text', text: id }], timestamp: 1 },
    },
  },
  { type: 'leaf', session_id, entry_id: id },
]

/** A store with sessions `alice`, `bob` and `carol` committed (bob with one message), then every commit held. */
async function open(): Promise<{ g: ReturnType<typeof heldStorage>; store: Store }> {
  const g = heldStorage()
  g.release()
  const store = await createStore({ storage: g.storage, multiTab: false, now: () => 1_000_000 })
  await Promise.all(Object.values(operations).map((op) => op.load?.()))
  await store.ensure({ session_id: 'alice' })
  await store.ensure({ session_id: 'bob' })
  await store.ensure({ session_id: 'carol' })
  await store.applyReplica(message('bob', 'b1'), { policy: 'push' })
  g.hold()
  return { g, store }
}

describe('reads of one session while other sessions commit', () => {
  it("bob's reads answer while alice's pushes are held in their commit; alice's own read waits for them", async () => {
    const { g, store } = await open()
    const before = g.commits
    const first = track(store.applyReplica(message('alice', 'a1'), { policy: 'push' }))
    await turns(5)
    // The second push queues behind the first, which is in flight.
    const second = track(store.applyReplica(message('alice', 'a2', 'a1'), { policy: 'push' }))
    const aliceRead = track(store.messages({ session_id: 'alice' }))
    const bobGet = track(store.get({ session_id: 'bob' }))
    const bobMessages = track(store.messages({ session_id: 'bob' }))
    const bobTail = track(store.messagesTail({ session_id: 'bob', limit: 5 }))
    await turns(20)
    expect([bobGet.done, bobMessages.done, bobTail.done]).toStrictEqual([true, true, true])
    expect(bobGet.value?.meta.message_count).toBe(1)
    expect(bobMessages.value?.messages.map((m) => m.entry_id)).toStrictEqual(['b1'])
    // Nothing committed meanwhile: alice's writes and her read of her session still wait.
    expect(g.commits).toBe(before)
    expect([first.done, second.done, aliceRead.done]).toStrictEqual([false, false, false])
    g.release()
    await turns(20)
    expect([first.done, second.done, aliceRead.done]).toStrictEqual([true, true, true])
    // Issued after both pushes, alice's read sees both.
    expect(aliceRead.value?.messages.map((m) => m.entry_id)).toStrictEqual(['a1', 'a2'])
    await store.close()
  })

  it("a read issued after a write of its own session waits for it, and so does every read behind an operation's write", async () => {
    const { g, store } = await open()
    const push = track(store.applyReplica(message('alice', 'a1'), { policy: 'push' }))
    await turns(5)
    // A push to bob's session, then bob's read: the read sees the push.
    const bobPush = track(store.applyReplica(message('bob', 'b2', 'b1'), { policy: 'push' }))
    const bobRead = track(store.messages({ session_id: 'bob' }))
    // A delete is an operation's write (its reach is not known before it runs): what follows waits.
    const deleted = track(store.delete({ session_id: 'carol' }))
    const afterDelete = track(store.get({ session_id: 'carol' }))
    await turns(20)
    expect([push.done, bobPush.done, bobRead.done, deleted.done, afterDelete.done]).toStrictEqual([
      false,
      false,
      false,
      false,
      false,
    ])
    g.release()
    await turns(30)
    expect(bobRead.value?.messages.map((m) => m.entry_id)).toStrictEqual(['b1', 'b2'])
    expect(deleted.value).toStrictEqual({ deleted: true })
    expect(afterDelete.done).toBe(true)
    expect(afterDelete.value).toBeNull()
    await store.close()
  })
})
