import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createStore,
  indexedDbStorage,
  type SessionEntry,
  type SessionHead,
  type SessionMeta,
  type Store,
} from '../src/index.js'
import { idbStores, user } from './idb-stores.js'

// The order record (layout 6, `Order` in storage/idb/layout.ts) is what a head is read from
// beside its record: after any sequence of writes, by either of two tabs, on a clock that
// often stands still (a commit that moves no sort key), every session's order record must say
// what its newest stamp says, and a fresh store must list exactly that. Random sequences over
// every write path: create, append, appendMany, updateMessage, setActiveLeaf, setStatus,
// setMeta, setDraft, delete, fork, applyReplica (new sessions and entries of known ones) and
// importSession.

const { dbName } = idbStores('order-records')

type Op =
  | { t: 'create' }
  | { t: 'append'; s: number }
  | { t: 'appendMany'; s: number; n: number }
  | { t: 'update'; s: number; e: number }
  | { t: 'setLeaf'; s: number; e: number }
  | { t: 'setStatus'; s: number; done: boolean }
  | { t: 'setMeta'; s: number; title: string }
  | { t: 'setDraft'; s: number; text: string }
  | { t: 'delete'; s: number }
  | { t: 'fork'; s: number; e: number }
  | { t: 'replicaNew' }
  | { t: 'replicaEntry'; s: number }
  | { t: 'import' }
type Step = { op: Op; tab: 0 | 1; tick: boolean }

const idx = fc.nat({ max: 9 })
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ t: 'create' as const }) },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('append' as const), s: idx }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('appendMany' as const),
      s: idx,
      n: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('update' as const), s: idx, e: idx }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('setLeaf' as const), s: idx, e: idx }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('setStatus' as const), s: idx, done: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('setMeta' as const), s: idx, title: fc.string({ maxLength: 4 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('setDraft' as const), s: idx, text: fc.string({ maxLength: 4 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('delete' as const), s: idx }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('fork' as const), s: idx, e: idx }) },
  { weight: 1, arbitrary: fc.constant({ t: 'replicaNew' as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('replicaEntry' as const), s: idx }) },
  { weight: 1, arbitrary: fc.constant({ t: 'import' as const }) },
)
const step: fc.Arbitrary<Step> = fc.record({
  op,
  tab: fc.constantFrom(0 as const, 1 as const),
  tick: fc.boolean(),
})

const req = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })

interface StampRecord {
  h?: { s: string; v: number; i: string; l?: string | null; n?: number; u?: number }
}

/**
 * Read straight from the database: each session's order record, and what its head record and
 * newest stamp (the index `stamps`, [session_id, -v]: its first record in the session's range)
 * say the order record must hold.
 */
async function onDisk(
  name: string,
): Promise<{ order: Map<string, unknown>; expected: Map<string, unknown>; metas: Map<string, SessionMeta> }> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const r = indexedDB.open(name)
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
  try {
    const tx = db.transaction(['sessions', 'entries', 'order'], 'readonly')
    const heads = (await req(tx.objectStore('sessions').getAll())) as SessionHead[]
    const orderKeys = await req(tx.objectStore('order').getAllKeys())
    const orderValues = await req(tx.objectStore('order').getAll())
    const order = new Map(orderKeys.map((k, i) => [k as string, orderValues[i]]))
    const expected = new Map<string, unknown>()
    const metas = new Map<string, SessionMeta>()
    for (const head of heads) {
      const id = head.meta.session_id
      const newest = (await req(
        tx
          .objectStore('entries')
          .index('stamps')
          .get(IDBKeyRange.bound([id], [id, []])),
      )) as StampRecord | undefined
      const h = newest?.h
      expect(h, `${id} has a stamp`).toBeDefined()
      const later = h!.l !== undefined && h!.v > head.v
      const meta = later ? { ...head.meta, updated_at: h!.u!, message_count: h!.n! } : head.meta
      metas.set(id, meta)
      expected.set(id, {
        s: id,
        u: meta.updated_at,
        c: meta.created_at,
        t: meta.status,
        k: meta.kind,
        l: later ? h!.l : head.leaf,
        n: meta.message_count,
        v: Math.max(h!.v, head.v),
        i: h!.i,
      })
    }
    return { order, expected, metas }
  } finally {
    db.close()
  }
}

const metaOf = (session_id: string, at: number): SessionMeta =>
  ({
    session_id,
    title: session_id,
    description: '',
    status: 'idle',
    kind: 'user',
    created_at: at,
    updated_at: at,
    message_count: 0,
  }) as SessionMeta
const entryOf = (id: string, parent: string | null, at: number): SessionEntry =>
  ({ id, parent_id: parent, timestamp: at, revision: 0, kind: 'message', message: user(id) }) as SessionEntry

describe('order records follow every write (Chromium IndexedDB)', () => {
  it('after random writes by two tabs, each order record says what the head and its newest stamp say', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30, size: 'medium' }), async (steps) => {
        const name = dbName()
        let clock = 1_000
        const now = () => clock
        const tabs: Store[] = [
          await createStore({ storage: indexedDbStorage({ name }), now }),
          await createStore({ storage: indexedDbStorage({ name }), now }),
        ]
        // Sessions and entry ids as the steps made them (some since deleted: a refused call writes nothing).
        const sessions: string[] = []
        const entries = new Map<string, string[]>()
        const sid = (i: number): string | undefined => sessions[i % Math.max(sessions.length, 1)]
        const eid = (s: string, i: number): string | undefined => {
          const e = entries.get(s) ?? []
          return e[i % Math.max(e.length, 1)]
        }
        const made = (id: string) => {
          sessions.push(id)
          entries.set(id, [])
        }
        let n = 0
        try {
          // Two sessions to begin with, so the first steps have something to write to.
          const start: Step[] = [
            { op: { t: 'create' }, tab: 0, tick: false },
            { op: { t: 'create' }, tab: 1, tick: false },
          ]
          for (const { op, tab, tick } of [...start, ...steps]) {
            if (tick) clock++
            const st = tabs[tab]!
            const s = 's' in op ? sid(op.s) : undefined
            try {
              switch (op.t) {
                case 'create':
                  made((await st.create({ title: `c${n++}` })).session_id)
                  break
                case 'append':
                  if (s)
                    entries.get(s)!.push((await st.append({ session_id: s, message: user('a') })).entry_id)
                  break
                case 'appendMany':
                  if (s) {
                    const r = await st.appendMany({
                      session_id: s,
                      messages: Array.from({ length: op.n }, () => user('m')),
                    })
                    entries.get(s)!.push(...r.entry_ids)
                  }
                  break
                case 'update': {
                  const e = s && eid(s, op.e)
                  if (e)
                    await st.updateMessage({
                      session_id: s,
                      entry_id: e,
                      content: [{ type: 'text', text: 'u' }],
                    })
                  break
                }
                case 'setLeaf': {
                  const e = s && eid(s, op.e)
                  if (e) await st.setActiveLeaf({ session_id: s, entry_id: e })
                  break
                }
                case 'setStatus':
                  if (s) await st.setStatus({ session_id: s, status: op.done ? 'done' : 'idle' })
                  break
                case 'setMeta':
                  if (s) await st.setMeta({ session_id: s, title: op.title })
                  break
                case 'setDraft':
                  if (s) await st.setDraft({ session_id: s, draft: op.text })
                  break
                case 'delete':
                  if (s) await st.delete({ session_id: s })
                  break
                case 'fork': {
                  const e = s && eid(s, op.e)
                  if (e) {
                    const f = await st.fork({ session_id: s, entry_id: e })
                    made(f.session_id)
                  }
                  break
                }
                case 'replicaNew': {
                  const id = `r${n++}`
                  const e = [entryOf(`${id}-1`, null, clock), entryOf(`${id}-2`, `${id}-1`, clock)]
                  await st.applyReplica(
                    [
                      { type: 'meta', meta: { ...metaOf(id, clock), message_count: 2 }, create: true },
                      ...e.map((entry) => ({ type: 'entry' as const, session_id: id, entry })),
                      { type: 'leaf', session_id: id, entry_id: `${id}-2` },
                    ],
                    { policy: 'pull' },
                  )
                  made(id)
                  entries.get(id)!.push(`${id}-1`, `${id}-2`)
                  break
                }
                case 'replicaEntry': {
                  if (!s) break
                  const list = entries.get(s)!
                  const id = `${s}-x${n++}`
                  const entry = entryOf(id, list.at(-1) ?? null, clock)
                  await st.applyReplica(
                    [
                      { type: 'entry', session_id: s, entry },
                      { type: 'leaf', session_id: s, entry_id: id },
                    ],
                    { policy: 'pull' },
                  )
                  list.push(id)
                  break
                }
                case 'import': {
                  const id = `i${n++}`
                  const e = [entryOf(`${id}-1`, null, clock), entryOf(`${id}-2`, `${id}-1`, clock)]
                  await st.importSession({ meta: metaOf(id, clock), entries: e, active_leaf: `${id}-2` })
                  made(id)
                  entries.get(id)!.push(`${id}-1`, `${id}-2`)
                  break
                }
              }
            } catch (e) {
              // A call the contract refuses (a deleted session, an entry of another branch) writes
              // nothing: the records must still agree. Anything else is a failure.
              if (!(e instanceof Error && 'code' in e)) throw e
            }
          }
          for (const t of tabs) await t.flush()
          const disk = await onDisk(name)
          expect(new Set(disk.order.keys())).toStrictEqual(new Set(disk.expected.keys()))
          for (const [id, want] of disk.expected) expect(disk.order.get(id), id).toStrictEqual(want)
          // A fresh tab lists and reads exactly that.
          const fresh = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
          try {
            const listed = (await fresh.list({ limit: 500 })).sessions
            expect(new Map(listed.map((m) => [m.session_id, m]))).toStrictEqual(disk.metas)
            for (const [id, meta] of disk.metas)
              expect((await fresh.get({ session_id: id }))?.meta).toStrictEqual(meta)
          } finally {
            await fresh.close()
          }
        } finally {
          for (const t of tabs) await t.close()
          indexedDB.deleteDatabase(name)
        }
      }),
      { numRuns: 30 },
    )
  })
})
