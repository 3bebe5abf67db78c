import { afterEach, describe, expect, it, vi } from 'vitest'
import { firstValueFrom, filter } from 'rxjs'
import { createStore, memoryStorage, SessionError, type Storage, type Store } from '../../src/index.js'
import { engineOf } from '../../src/store.js'
import { hostOf } from '../../src/host.js'
import { entryBytes } from '../../src/engine/cache.js'
import { isHeldSealed } from '../../src/model/sealed-entry.js'
import { KEYRING_KEY } from '../../src/storage/sealed/encryption.js'

// An encrypted store loads a session's entries sealed and opens only what a read returns (W4):
// what every reader sees is the same plaintext as a clear store's, a tampered entry is refused
// at the read that opens it, a lock leaves nothing opened, keys rotated away still open, and
// the entry cache weighs what is held.

const passphrase = 'sealed reads passphrase'
const N = 120

/** A store whose ids and clock are the same on every run, so two stores' answers compare equal. */
function open(storage: Storage, encrypted: boolean, extra: Record<string, unknown> = {}): Promise<Store> {
  let n = 0
  let t = 1_000
  return createStore({
    storage,
    multiTab: false,
    prefetch: false,
    newId: (kind) => `${kind[0]}_${String(++n).padStart(6, '0')}`,
    now: () => ++t,
    ...(encrypted && { encryption: { passphrase } }),
    ...extra,
  })
}

/** A session of `N` entries, users' and assistants'. */
async function fill(store: Store): Promise<{ session_id: string; ids: string[] }> {
  const { session_id } = await store.create({ title: 'long' })
  const ids: string[] = []
  for (let i = 0; i < N; i++) {
    const r = await store.append({
      session_id,
      message:
        i % 3 === 0
          ? { role: 'user', content: [{ type: 'text', text: `question ${i}` }], timestamp: i }
          : {
              role: 'assistant',
              content: [{ type: 'text', text: `answer ${i} ${'x'.repeat(i)}` }],
              stop_reason: 'end',
              model: 'm',
              provider: 'p',
              timestamp: i,
            },
    })
    ids.push(r.entry_id)
  }
  await store.flush()
  return { session_id, ids }
}

const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
  } catch (e) {
    return e instanceof SessionError ? e.code : String(e)
  }
  return 'resolved'
}

/** How many entries of `session_id` are held sealed now. */
const sealedHeld = (store: Store, session_id: string): number => {
  const s = engineOf(store).state.sessions.get(session_id)
  return s?.entries ? [...s.entries.values()].filter(isHeldSealed).length : -1
}

/** Counts Web Crypto `decrypt` calls while `run` runs. */
async function decrypts(run: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(crypto.subtle, 'decrypt')
  try {
    await run()
    return spy.mock.calls.length
  } finally {
    spy.mockRestore()
  }
}

afterEach(() => vi.restoreAllMocks())

for (const paged of [false, true]) {
  describe(`an encrypted store opens what its reads return${paged ? ' (paged heads)' : ''}`, () => {
    it('a page of a cold session opens that page only, and answers as a clear store does', async () => {
      const clearInner = memoryStorage({ paged })
      const clear = await open(clearInner, false)
      const inner = memoryStorage({ paged })
      const sealed = await open(inner, true)
      const [{ session_id }] = await Promise.all([fill(clear), fill(sealed)])
      await Promise.all([clear.close(), sealed.close()])
      const c = await open(clearInner, false)
      const s = await open(inner, true)
      const req = { session_id, limit: 10 }
      // With a read of the session's meta in the same tick, as an app's first screen makes.
      const opened = await decrypts(async () => {
        const [page, got] = await Promise.all([s.messages(req), s.get({ session_id })])
        expect(page).toEqual(await c.messages(req))
        expect(got).toEqual(await c.get({ session_id }))
      })
      // The page's 10 entries (and the head's sealed fields), not the session's 120.
      expect(opened).toBeLessThanOrEqual(10 + 6)
      expect(sealedHeld(s, session_id)).toBe(N - 10)
      // Pages further on, a role filter, a message by id: each the same as clear.
      const first = await c.messages(req)
      const next = { ...req, cursor: first.next_cursor! }
      expect(await s.messages(next)).toEqual(await c.messages(next))
      const users = { session_id, roles: ['user' as const], limit: 7 }
      expect(await s.messages(users)).toEqual(await c.messages(users))
      const last = first.messages[9]!.entry_id
      expect(await s.getMessage({ session_id, entry_id: last })).toEqual(
        await c.getMessage({ session_id, entry_id: last }),
      )
      // Opened entries stay opened: the same page again decrypts nothing.
      expect(await decrypts(() => s.messages(req))).toBe(0)
      // Readers of the whole session open it whole and see what a clear store shows.
      const tail = { session_id, limit: 5 }
      expect(await s.messagesTail(tail)).toEqual(await c.messagesTail(tail))
      expect(sealedHeld(s, session_id)).toBe(0)
      await Promise.all([c.close(), s.close()])
    })

    it('live queries, writes and forks on a session read in part see plaintext as before', async () => {
      const clearInner = memoryStorage({ paged })
      const clear = await open(clearInner, false)
      const inner = memoryStorage({ paged })
      const sealed = await open(inner, true)
      const [{ session_id, ids }] = await Promise.all([fill(clear), fill(sealed)])
      await Promise.all([clear.close(), sealed.close()])
      const c = await open(clearInner, false)
      const s = await open(inner, true)
      await Promise.all([c.messages({ session_id, limit: 3 }), s.messages({ session_id, limit: 3 })])
      expect(sealedHeld(s, session_id)).toBe(N - 3)
      const live = (store: Store) =>
        firstValueFrom(store.messages$({ session_id }).pipe(filter((m) => m.length > 0)))
      expect(await live(s)).toEqual(await live(c))
      const tree = (store: Store) =>
        firstValueFrom(store.tree$(session_id).pipe(filter((t) => t !== null && t.entries.size > 0)))
      const [st, ct] = await Promise.all([tree(s), tree(c)])
      expect([...st!.entries.values()]).toEqual([...ct!.entries.values()])
      const one = (store: Store) => firstValueFrom(store.entry$(session_id, ids[50]!))
      expect(await one(s)).toEqual(await one(c))
      await Promise.all([c.close(), s.close()])

      // Writes on a session held sealed: an update, an append, a fork of a message deep inside.
      for (const entry_id of [ids[40]!]) {
        const c2 = await open(clearInner, false)
        const s2 = await open(inner, true)
        await Promise.all([c2.messages({ session_id, limit: 2 }), s2.messages({ session_id, limit: 2 })])
        const content = [{ type: 'text' as const, text: 'rewritten' }]
        const upd = { session_id, entry_id, content }
        expect(await s2.updateMessage(upd)).toEqual(await c2.updateMessage(upd))
        const fork = { session_id, entry_id: ids[60]! }
        const [sf, cf] = await Promise.all([s2.fork(fork), c2.fork(fork)])
        expect(sf).toEqual(cf)
        const all = (store: Store, id: string) => store.messages({ session_id: id, limit: 500 })
        expect(await all(s2, sf.session_id)).toEqual(await all(c2, cf.session_id))
        expect(await all(s2, session_id)).toEqual(await all(c2, session_id))
        await Promise.all([c2.close(), s2.close()])
      }
    })

    it('relay, commit hooks (the sync outbox) and search see plaintext on a session read in part', async () => {
      const inner = memoryStorage({ paged })
      const writer = await open(inner, true)
      const { session_id, ids } = await fill(writer)
      await writer.close()
      const a = await open(inner, true, { multiTab: true })
      const b = await open(inner, true, { multiTab: true })
      await Promise.all([a.messages({ session_id, limit: 2 }), b.messages({ session_id, limit: 2 })])
      expect(sealedHeld(b, session_id)).toBe(N - 2)
      // What a commit hook (sync's outbox) is shown of an update to an entry held sealed.
      const hooked: unknown[] = []
      a.addCommitHook((_applied, overlay) => {
        for (const e of overlay.entries.get(session_id)?.values() ?? []) hooked.push(e)
        return []
      })
      const seen = firstValueFrom(
        b
          .entry$(session_id, ids[50]!)
          .pipe(
            filter((e) => e?.kind === 'message' && JSON.stringify(e.message.content).includes('relayed')),
          ),
      )
      await a.updateMessage({ session_id, entry_id: ids[50]!, content: [{ type: 'text', text: 'relayed' }] })
      expect(JSON.stringify(hooked)).toContain('relayed')
      // Relayed to the other tab: its live entry shows the new plaintext.
      expect(await seen).toEqual((await a.getMessage({ session_id, entry_id: ids[50]! }))!.entry)
      // Search indexes every message, the ones no read opened included.
      const { enableSearch } = await import('../../src/search/index.js')
      const search = await enableSearch(b)
      const found = await search.query({ query: 'question', limit: 100 })
      expect(found.hits.length).toBe(Math.ceil(N / 3))
      search.close()
      await Promise.all([a.close(), b.close()])
    })

    it('a tampered entry is refused at the read that opens it, and nothing of that read is kept', async () => {
      const inner = memoryStorage({ paged })
      const store = await open(inner, true)
      const { session_id, ids } = await fill(store)
      await store.close()
      // Flip a character of the 5th entry's box on disk (the same base64 length: still parses).
      const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: string }>
      const bad = stored.find((e) => e.id === ids[4])!
      const i = 40
      bad.box = bad.box.slice(0, i) + (bad.box[i] === 'A' ? 'B' : 'A') + bad.box.slice(i + 1)
      const again = await open(inner, true)
      // The page holding it is refused, again and again: nothing of it was taken in.
      expect(await code(again.messages({ session_id, limit: 10 }))).toBe('session/integrity')
      expect(sealedHeld(again, session_id)).toBe(N)
      expect(await code(again.messages({ session_id, limit: 10 }))).toBe('session/integrity')
      expect(await code(again.getMessage({ session_id, entry_id: ids[4]! }))).toBe('session/integrity')
      // A page without it opens; the live list of the whole path errors, never shows it.
      const later = await again.messages({ session_id, limit: 10, after_entry_id: ids[9]! })
      expect(later.messages.map((m) => m.entry_id)).toEqual(ids.slice(10, 20))
      const error = await new Promise<unknown>((resolve) =>
        again.messages$({ session_id }).subscribe({ next: () => resolve('shown'), error: resolve }),
      )
      expect(error).toBeInstanceOf(SessionError)
      expect((error as SessionError).code).toBe('session/integrity')
      await again.close()
    })

    it('a lock lets go of every opened entry, and nothing opens while locked', async () => {
      const inner = memoryStorage({ paged })
      const store = await open(inner, true)
      const { session_id, ids } = await fill(store)
      await store.close()
      const again = await open(inner, true)
      await again.messages({ session_id, limit: 10 })
      const held = engineOf(again).state.sessions.get(session_id)!
      const some = [...held.entries!.values()].filter(isHeldSealed).slice(0, 3)
      await again.lock()
      expect(hostOf(again).has(session_id)).toBe(false)
      expect(engineOf(again).state.sessions.size).toBe(0)
      expect(await code(again.messages({ session_id, limit: 10 }))).toBe('session/locked')
      expect(await code(again.getMessage({ session_id, entry_id: ids[0]! }))).toBe('session/locked')
      // Entries read sealed before the lock do not open with the keys gone.
      expect(await code(again.storage.openEntries!(session_id, some))).toBe('session/locked')
      await again.unlock(passphrase)
      expect((await again.messages({ session_id, limit: 1 })).messages[0]!.entry_id).toBe(ids[0])
      await again.close()
    })

    it('entries sealed under a key rotated away still open, in one page with newer ones', async () => {
      const inner = memoryStorage({ paged })
      const store = await open(inner, true)
      const { session_id, ids } = await fill(store)
      const ring = hostOf(store).keyring!
      const old = ring.currentKeyId
      await ring.rotate()
      await inner.transact(async () => ({
        deleted: new Set<string>(),
        heads: new Map(),
        entries: new Map(),
        side: [{ store: 'kv', key: KEYRING_KEY, value: ring.serialize() }],
      }))
      const fresh = await store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: 'after rotation' }], timestamp: 999 },
      })
      await store.close()
      const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: string }>
      const keyOf = (box: string) => {
        const b = Uint8Array.from(atob(box), (ch) => ch.charCodeAt(0))
        return String.fromCharCode(...b.subarray(2, 2 + b[1]!))
      }
      expect(keyOf(stored.find((e) => e.id === ids[N - 1])!.box)).toBe(old)
      expect(keyOf(stored.find((e) => e.id === fresh.entry_id)!.box)).not.toBe(old)
      const again = await open(inner, true)
      const page = await again.messages({ session_id, limit: 2, after_entry_id: ids[N - 2]! })
      expect(page.messages.map((m) => m.entry_id)).toEqual([ids[N - 1], fresh.entry_id])
      expect(JSON.stringify(page)).toContain('after rotation')
      expect(JSON.stringify(page)).toContain(`answer ${N - 1}`)
      await again.close()
    })

    it('the entry cache weighs what is held: sealed records, then the opened entries', async () => {
      const inner = memoryStorage({ paged })
      const store = await open(inner, true)
      const { session_id } = await fill(store)
      await store.close()
      const again = await open(inner, true, { cache: { maxBytes: 1e9 } })
      const engine = engineOf(again)
      const weight = (): number => {
        let n = 0
        for (const e of engine.state.sessions.get(session_id)!.entries!.values()) n += entryBytes(e)
        return n
      }
      await again.messages({ session_id, limit: 10 })
      expect(sealedHeld(again, session_id)).toBe(N - 10)
      expect(engine.cache!.bytes).toBe(weight())
      await again.messages({ session_id, limit: 60 })
      expect(engine.cache!.bytes).toBe(weight())
      await again.messagesTail({ session_id, limit: 5 })
      expect(sealedHeld(again, session_id)).toBe(0)
      expect(engine.cache!.bytes).toBe(weight())
      await again.close()
    })
  })
}
