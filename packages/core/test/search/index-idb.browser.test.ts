import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { openDB } from 'idb'
import { createStore, indexedDbStorage, type Store } from '../../src/index.js'
import { hostOf } from '../../src/host.js'
import { enableSearch } from '../../src/search/index.js'
import { searchWith } from '../../src/search/enable-search.js'
import { apply, expectIndexEqualsScan, opArb } from './search-model.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 1,
})
const heads = (s: Store): string =>
  JSON.stringify([...hostOf(s).heads()].map((h) => [h.meta.session_id, h.v]).sort())
const found = async (search: Awaited<ReturnType<typeof enableSearch>>, query: string): Promise<string[]> =>
  (await search.query({ query, prefix: false, limit: 100 })).hits
    .map((h) => `${h.session_id} ${h.entry_id}`)
    .sort()

describe('search index over IndexedDB', () => {
  it('equals a brute-force scan after random writes from this tab and another', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 40, size: 'max' }), async (ops) => {
        const name = `search-model-${crypto.randomUUID()}`
        // Two stores on one database with the relay on stand for two tabs; search runs in the first.
        const a = await createStore({ storage: indexedDbStorage({ name }) })
        const b = await createStore({ storage: indexedDbStorage({ name }) })
        // Blocks of two documents: the short sessions here span several, as long ones do.
        const search = await searchWith(a, {}, 2)
        for (const op of ops) await apply([a, b], op, search)
        await b.flush()
        // The other tab's last commits reach this one through the relay.
        await vi.waitFor(() => expect(heads(a)).toBe(heads(b)))
        await expectIndexEqualsScan(a, search)
        search.close()
        // Read back from its database (every mark current: nothing is read from the store again).
        const again = await searchWith(a, {}, 2)
        await expectIndexEqualsScan(a, again)
        again.close()
        await Promise.all([a.close(), b.close()])
      }),
      { numRuns: 12 },
    )
  })

  it('catches up on reopen: finds what was written while it was off, never what was deleted or overwritten', async () => {
    const name = `search-reopen-${crypto.randomUUID()}`
    let store = await createStore({ storage: indexedDbStorage({ name }) })
    let search = await enableSearch(store)
    const s1 = (await store.create({ title: 'first' })).session_id
    const s2 = (await store.create({ title: 'second' })).session_id
    const e1 = (await store.append({ session_id: s1, message: user('alpha one') })).entry_id
    const e2 = (await store.append({ session_id: s2, message: user('alpha two') })).entry_id
    await search.flush()
    // Written with search on but never indexed: closed before it settled, as a crash would.
    const lost = (await store.append({ session_id: s2, message: user('zeta') })).entry_id
    search.close()
    // Written with search off.
    await store.delete({ session_id: s1 })
    await store.updateMessage({ session_id: s2, entry_id: e2, content: [{ type: 'text', text: 'gamma' }] })
    const e3 = (await store.append({ session_id: s2, message: user('delta') })).entry_id
    const s3 = (await store.create({ title: 'third' })).session_id
    const e4 = (await store.append({ session_id: s3, message: user('epsilon alpha') })).entry_id
    await store.close()

    // The index on disk still holds the first state (its marks say which).
    const disk = await openDB(`${name}:search`)
    expect((await disk.getAll('sessions')).map((r: { sid: string }) => r.sid).sort()).toEqual([s1, s2].sort())
    disk.close()

    store = await createStore({ storage: indexedDbStorage({ name }) })
    search = await enableSearch(store)
    expect(await found(search, 'alpha')).toEqual([`${s3} ${e4}`])
    expect(await found(search, 'one')).toEqual([])
    expect(await found(search, 'gamma')).toEqual([`${s2} ${e2}`])
    expect(await found(search, 'delta')).toEqual([`${s2} ${e3}`])
    expect(await found(search, 'zeta')).toEqual([`${s2} ${lost}`])
    expect(e1).toBeTruthy()
    search.close()
    await store.close()
  })

  it('lets one tab write the index database at a time; the next writer writes what it holds', async () => {
    const name = `search-writer-${crypto.randomUUID()}`
    const a = await createStore({ storage: indexedDbStorage({ name }) })
    const b = await createStore({ storage: indexedDbStorage({ name }) })
    // Nothing settles on its own here: only flushes index.
    const sa = await enableSearch(a, { settleMs: 600_000 })
    const sb = await enableSearch(b, { settleMs: 600_000 })
    const onDisk = async (): Promise<string[]> => {
      const db = await openDB(`${name}:search`)
      const sids = (await db.getAll('sessions')).map((r: { sid: string }) => r.sid)
      db.close()
      return sids
    }
    const { session_id } = await b.create({ title: 'written by the second tab' })
    await b.append({ session_id, message: user('beta') })
    await vi.waitFor(() => expect(heads(a)).toBe(heads(b)))
    await sb.flush()
    expect(await found(sb, 'beta')).toHaveLength(1)
    // The second tab indexed it but does not hold the lock: the database does not have it yet.
    expect(await onDisk()).toEqual([])
    sa.close()
    // The first tab let go: the second takes the lock and writes everything it holds.
    await vi.waitFor(async () => expect(await onDisk()).toEqual([session_id]))
    sb.close()
    await Promise.all([a.close(), b.close()])
  })
})
