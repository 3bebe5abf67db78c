import { hostOf } from '@colloquy/core/host'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Storage, type Store } from '@colloquy/core'
import { ChangeLog, type SequencedChange } from '../../packages/server/src/changes/change-log.js'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { comparable, replica, snapshot, tempDir, user } from './helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A server-side store with its change log, as createServer wires them. */
async function logged(storage: Storage, clock = { t: 1_000_000 }): Promise<{ store: Store; log: ChangeLog }> {
  const log = new ChangeLog(storage)
  let n = 0
  const store = await createStore({
    storage: log.storage,
    multiTab: false,
    now: () => clock.t,
    newId: (k) => `${k[0]}_${++n}`,
  })
  log.attach(hostOf(store))
  cleanups.push(() => store.close())
  return { store, log }
}

/** Pulls every page after `since` into a replica; returns the new checkpoint. */
async function pullInto(
  client: Store,
  log: ChangeLog,
  since: number,
  limit: number,
  filter?: { owner: string },
): Promise<number> {
  let checkpoint = since
  for (;;) {
    const page = await log.page(checkpoint, limit, filter)
    await client.applyReplica(
      page.changes.map((c) => c.change),
      { policy: 'pull' },
    )
    checkpoint = page.checkpoint
    if (!page.more) return checkpoint
  }
}

describe('change log', () => {
  it('numbers every committed change, one record per key, each session and entry first where it appeared', async () => {
    const { store, log } = await logged(memoryStorage())
    const { session_id } = await store.create({ title: 'a' })
    await store.append({ session_id, message: user('one') })
    await store.append({ session_id, message: user('two') })
    await store.updateMessage({ session_id, entry_id: 'e_2', content: [{ type: 'text', text: 'one!' }] })
    const page = await log.page(0, 100)
    const kinds = page.changes.map((c: SequencedChange) => [
      c.seq,
      c.change.type,
      c.change.type === 'entry' ? c.change.entry.id : '',
    ])
    // created(1) | e_2 added(2) meta(3) leaf(4) | e_3 added(5) meta(6) leaf(7) | e_2 updated(8) meta(9):
    // meta and leaf moved to their newest position; e_2 keeps its first one and has an update.
    expect(kinds).toStrictEqual([
      [1, 'meta', ''],
      [2, 'entry', 'e_2'],
      [5, 'entry', 'e_3'],
      [7, 'leaf', ''],
      [8, 'entry', 'e_2'],
      [9, 'meta', ''],
    ])
    // Every record carries the current state of what it names.
    expect(page.changes[1].change).toMatchObject({ entry: { revision: 1 } })
    expect(page).toMatchObject({ checkpoint: 9, head: 9, more: false })
  })

  it('pages by limit, and a checkpoint skips what the caller may not see', async () => {
    const { store, log } = await logged(memoryStorage())
    const mine = (await store.create({ metadata: { owner: 'u_1' } })).session_id
    const theirs = (await store.create({ metadata: { owner: 'u_2' } })).session_id
    await store.append({ session_id: theirs, message: user('secret') })
    await store.append({ session_id: mine, message: user('mine') })
    await store.append({ session_id: theirs, message: user('secret 2') })
    const first = await log.page(0, 2, { owner: 'u_1' })
    expect(
      first.changes.every(
        (c) => (c.change.type === 'meta' ? c.change.meta.session_id : c.change.session_id) === mine,
      ),
    ).toBe(true)
    expect(first.more).toBe(true)
    const rest = await log.page(first.checkpoint, 100, { owner: 'u_1' })
    expect(rest.changes.map((c) => c.change.type)).toStrictEqual(['meta', 'leaf'])
    // The last records are the other owner's: the checkpoint still reaches the head.
    expect(rest).toMatchObject({ checkpoint: log.head, head: log.head, more: false })
    expect(JSON.stringify(rest)).not.toContain('secret')
  })

  it('announces each commit to subscribers, in order, with the metadata that scopes it', async () => {
    const { store, log } = await logged(memoryStorage())
    const seen: Array<[number, string, unknown]> = []
    log.subscribe((changes) =>
      seen.push(...changes.map((c) => [c.seq, c.change.type, c.metadata] as [number, string, unknown])),
    )
    const { session_id } = await store.create({ metadata: { owner: 'u_1' } })
    await store.delete({ session_id })
    expect(seen).toStrictEqual([
      [1, 'meta', { owner: 'u_1' }],
      [2, 'delete', { owner: 'u_1' }],
    ])
  })

  it('survives restarts: numbers keep growing and an old checkpoint still converges (state read back from disk)', async () => {
    const { dir, remove } = await tempDir('log')
    cleanups.push(remove)
    const clock = { t: 1_000_000 }
    const a = await logged(fileStorage({ dir, warn: () => {} }), clock)
    const s1 = (await a.store.create({ title: 'kept' })).session_id
    await a.store.append({ session_id: s1, message: user('one') })
    const client = await replica()
    cleanups.push(() => client.close())
    const cp = await pullInto(client, a.log, 0, 2)
    clock.t += 10
    await a.store.updateMessage({
      session_id: s1,
      entry_id: 'e_2',
      content: [{ type: 'text', text: 'edited' }],
    })
    await a.store.append({ session_id: s1, message: user('two') })
    const gone = (await a.store.create({ title: 'gone' })).session_id
    await a.store.delete({ session_id: gone })
    const head = a.log.head
    await a.store.close()

    const b = await logged(fileStorage({ dir, warn: () => {} }), clock)
    expect(b.log.head).toBe(head)
    await pullInto(client, b.log, cp, 1)
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(await snapshot(b.store)))
    clock.t += 10
    await b.store.append({ session_id: s1, message: user('three') })
    expect(b.log.head).toBeGreaterThan(head)
  })

  it('logs sessions it has never seen (a seed-written directory) when it opens', async () => {
    const { dir, remove } = await tempDir('log-seed')
    cleanups.push(remove)
    // Written without the change log: no side records at all.
    const plain = await createStore({ storage: fileStorage({ dir, warn: () => {} }), multiTab: false })
    const { session_id } = await plain.create({ title: 'old' })
    await plain.append({ session_id, message: user('a') })
    await plain.append({ session_id, message: user('b') })
    await plain.close()
    const { store, log } = await logged(fileStorage({ dir, warn: () => {} }))
    const client = await replica()
    cleanups.push(() => client.close())
    await pullInto(client, log, 0, 1)
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(await snapshot(store)))
  })

  it('property: replicas pulling from any stale checkpoint, in pages of any size, converge on the server', async () => {
    const sessionIds = ['a', 'b', 'c']
    const op = fc.oneof(
      fc.record({ k: fc.constant('ensure'), s: fc.constantFrom(...sessionIds) }),
      {
        weight: 4,
        arbitrary: fc.record({
          k: fc.constant('append'),
          s: fc.constantFrom(...sessionIds),
          at: fc.nat(20),
          branch: fc.boolean(),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({ k: fc.constant('update'), s: fc.constantFrom(...sessionIds), at: fc.nat(20) }),
      },
      fc.record({
        k: fc.constant('appendMany'),
        s: fc.constantFrom(...sessionIds),
        n: fc.integer({ min: 1, max: 3 }),
      }),
      fc.record({ k: fc.constant('update'), s: fc.constantFrom(...sessionIds), at: fc.nat(20) }),
      fc.record({ k: fc.constant('leaf'), s: fc.constantFrom(...sessionIds), at: fc.nat(20) }),
      fc.record({
        k: fc.constant('meta'),
        s: fc.constantFrom(...sessionIds),
        title: fc.string({ maxLength: 3 }),
      }),
      fc.record({
        k: fc.constant('status'),
        s: fc.constantFrom(...sessionIds),
        status: fc.constantFrom('idle', 'working', 'done'),
      }),
      fc.record({ k: fc.constant('fork'), s: fc.constantFrom(...sessionIds), at: fc.nat(20) }),
      fc.record({ k: fc.constant('delete'), s: fc.constantFrom(...sessionIds) }),
      fc.record({ k: fc.constant('pull'), r: fc.nat(2), limit: fc.integer({ min: 1, max: 4 }) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), async (ops) => {
        const clock = { t: 1_000_000 }
        const { store, log } = await logged(memoryStorage(), clock)
        const clients = [await replica(), await replica(), await replica()]
        const checkpoints = [0, 0, 0]
        const entriesOf = async (s: string): Promise<string[]> => {
          await store.engine.ensureLoaded(s)
          return [...(store.engine.state.sessions.get(s)?.entries?.keys() ?? [])]
        }
        for (const session_id of sessionIds) await store.ensure({ session_id })
        for (const o of ops) {
          clock.t += 7
          const exists = 's' in o && store.engine.state.sessions.has(o.s)
          const pick = async (s: string, at: number): Promise<string | undefined> => {
            const ids = await entriesOf(s)
            return ids.length ? ids[at % ids.length] : undefined
          }
          switch (o.k) {
            case 'ensure':
              await store.ensure({ session_id: o.s })
              break
            case 'append':
              if (exists)
                await store.append({
                  session_id: o.s,
                  message: user(`m${clock.t}`),
                  parent_id: o.branch ? await pick(o.s, o.at) : undefined,
                })
              break
            case 'appendMany':
              if (exists)
                await store.appendMany({
                  session_id: o.s,
                  messages: Array.from({ length: o.n }, (_, i) => user(`b${i}`)),
                })
              break
            case 'update': {
              const e = exists ? await pick(o.s, o.at) : undefined
              if (e)
                await store.updateMessage({
                  session_id: o.s,
                  entry_id: e,
                  content: [{ type: 'text', text: `u${clock.t}` }],
                })
              break
            }
            case 'leaf': {
              const e = exists ? await pick(o.s, o.at) : undefined
              if (e) await store.setActiveLeaf({ session_id: o.s, entry_id: e })
              break
            }
            case 'meta':
              if (exists) await store.setMeta({ session_id: o.s, title: o.title })
              break
            case 'status':
              if (exists) await store.setStatus({ session_id: o.s, status: o.status as 'idle' })
              break
            case 'fork': {
              const e = exists ? await pick(o.s, o.at) : undefined
              if (e) await store.fork({ session_id: o.s, entry_id: e })
              break
            }
            case 'delete':
              await store.delete({ session_id: o.s })
              break
            case 'pull':
              checkpoints[o.r] = await pullInto(clients[o.r], log, checkpoints[o.r], o.limit)
              break
          }
        }
        const server = comparable(await snapshot(store))
        for (const [i, client] of clients.entries()) {
          await pullInto(client, log, checkpoints[i], 1 + i)
          expect(comparable(await snapshot(client))).toStrictEqual(server)
          await client.close()
        }
      }),
      { numRuns: 100 },
    )
  })
})
