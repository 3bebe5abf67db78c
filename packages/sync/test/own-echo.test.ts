import { afterEach, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import { createSync, type Sync, type Transport } from '../src/index.js'
import { replicaSnapshot } from '../../../test/support/replica-snapshot.js'
import { checkPush } from '../src/answers.js'
import { loopback, type Loopback } from './loopback.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 1,
})
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** A transport whose pushes take a few ms each way, so a push is in flight while echoes arrive. */
function slowPush(t: Transport, ms: () => number): Transport {
  return {
    ...t,
    push: async (req) => {
      await sleep(ms())
      const answer = await t.push(req)
      await sleep(ms())
      return answer
    },
    stream: t.stream.bind(t),
  }
}

async function device(
  server: Loopback,
  transport: Transport = server.transport(),
): Promise<{ store: Store; sync: Sync }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const sync = createSync(store, { url: 'http://unused', transport })
  cleanup.push(
    () => sync.close(),
    () => store.close(),
  )
  return { store, sync }
}

/** Appends `n` messages to the active leaf, each issued a few ms after the last, none awaited before the next. */
async function burst(store: Store, session_id: string, n: number, gap: () => number): Promise<string[]> {
  const pending: Array<Promise<{ entry_id: string }>> = []
  for (let i = 0; i < n; i++) {
    pending.push(store.append({ session_id, message: user(`m${i}`) }))
    await sleep(gap())
  }
  return (await Promise.all(pending)).map((r) => r.entry_id)
}

const parentsOf = async (store: Store, session_id: string, ids: readonly string[]) =>
  Promise.all(
    ids.map(async (entry_id) => (await store.getMessage({ session_id, entry_id }))!.entry.parent_id),
  )

describe('echoes of a device’s own older changes', () => {
  it('never move its leaf back: 50 quick appends form one chain, with echoes delayed and reordered', async () => {
    const server = await loopback()
    // Echoes come later than the next append (up to 30 ms), and overtake one another.
    server.streamDelay = () => Math.random() * 30
    const a = await device(
      server,
      slowPush(server.transport(), () => Math.random() * 4),
    )
    a.sync.start()
    const { session_id } = await a.store.create({ title: 'agent' })
    await a.sync.flush()
    const ids = await burst(a.store, session_id, 50, () => 2 + Math.random() * 10)
    expect(await parentsOf(a.store, session_id, ids)).toEqual([null, ...ids.slice(0, -1)])
    await a.sync.flush()
    // Every delayed echo of the 50 appends has reached A: none may have moved its leaf back.
    await server.delivered()
    await a.sync.flush()
    expect(await parentsOf(server.store, session_id, ids)).toEqual([null, ...ids.slice(0, -1)])
    expect(a.store.engine.state.sessions.get(session_id)?.head.leaf).toBe(ids[49])
    expect(await replicaSnapshot(a.store)).toEqual(await replicaSnapshot(server.store))
  })

  it('still takes another device’s leaf move made while its own push is in flight', async () => {
    const server = await loopback()
    let gate: (() => void) | undefined
    const base = server.transport()
    // A's push reaches the server, and its answer is held until B has moved the leaf.
    const held: Transport = {
      ...base,
      stream: base.stream.bind(base),
      push: async (req) => {
        const answer = await base.push(req)
        if (gate === undefined) return answer
        await new Promise<void>((r) => (gate = r))
        return answer
      },
    }
    const a = await device(server, held)
    const b = await device(server)
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({ title: 'shared' })
    const root = await a.store.append({ session_id, message: user('root') })
    const x = await a.store.append({ session_id, parent_id: root.entry_id, message: user('x') })
    await a.sync.flush()
    await b.sync.flush()
    gate = () => {}
    const y = await a.store.append({ session_id, parent_id: root.entry_id, message: user('y') })
    // A's leaf move to y is on the server, its answer not yet back: B moves the leaf to x after it.
    await expect.poll(() => server.store.engine.state.sessions.get(session_id)?.head.leaf).toBe(y.entry_id)
    await b.sync.flush()
    await b.store.setActiveLeaf({ session_id, entry_id: x.entry_id })
    await b.sync.flush()
    expect(server.store.engine.state.sessions.get(session_id)?.head.leaf).toBe(x.entry_id)
    // B's move reaches A on its stream while the answer is held; then the answer comes.
    await server.delivered()
    const release = gate
    gate = undefined
    release()
    await a.sync.flush()
    expect(a.store.engine.state.sessions.get(session_id)?.head.leaf).toBe(x.entry_id)
    expect(await replicaSnapshot(a.store)).toEqual(await replicaSnapshot(server.store))
  })

  it.each([true, false])(
    'with a push answer lost (a server that omits seq: %s), still converges',
    async (omit) => {
      const server = await loopback()
      server.omitPushSeq = omit
      server.streamDelay = () => Math.random() * 10
      const a = await device(
        server,
        slowPush(server.transport(), () => Math.random() * 4),
      )
      const b = await device(server)
      a.sync.start()
      b.sync.start()
      const { session_id } = await a.store.create({ title: 'old server' })
      await a.sync.flush()
      const first = burst(a.store, session_id, 10, () => Math.random() * 8)
      server.loseNextPushResponse = true
      const ids = await first
      await a.sync.flush()
      await b.sync.flush()
      await a.sync.flush()
      // An answer was lost and its push sent again.
      expect(server.loseNextPushResponse).toBe(false)
      // Every message is there (a lost answer applies what was held as before: a branch is possible).
      expect(
        (await Promise.all(ids.map((entry_id) => server.store.getMessage({ session_id, entry_id })))).every(
          Boolean,
        ),
      ).toBe(true)
      expect(await replicaSnapshot(a.store)).toEqual(await replicaSnapshot(server.store))
      expect(await replicaSnapshot(b.store)).toEqual(await replicaSnapshot(server.store))
    },
  )

  it('a push answer whose seq is not a log position is refused, retryably, before anything is acknowledged', () => {
    for (const seq of [-1, 1.5, '3', null, Number.MAX_SAFE_INTEGER + 2]) {
      expect(() => checkPush({ results: [{ id: 1, status: 'applied', seq }] }, [1])).toThrow(
        expect.objectContaining({ name: 'TransportError', retryable: true }),
      )
    }
    expect(
      checkPush(
        {
          results: [
            { id: 1, status: 'applied', seq: 7 },
            { id: 2, status: 'applied' },
          ],
        },
        [1, 2],
      ).results.map((r) => r.seq),
    ).toEqual([7, undefined])
  })
})
