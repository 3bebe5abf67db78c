import { afterEach, describe, expect, it, vi } from 'vitest'
import { BehaviorSubject, firstValueFrom, filter } from 'rxjs'
import {
  createStore,
  memoryStorage,
  SessionError,
  type AgentMessage,
  type MessageItem,
  type SessionEntry,
  type SessionImport,
  type Storage,
  type Store,
} from '../../src/index.js'
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

/**
 * A clear and an encrypted store holding the same session of `N` entries (`fill`), both closed
 * and opened again cold; `inner` and `clearInner` are their storages.
 */
async function coldPair(
  paged: boolean,
): Promise<{ c: Store; s: Store; inner: Storage; clearInner: Storage; session_id: string; ids: string[] }> {
  const clearInner = memoryStorage({ paged })
  const clear = await open(clearInner, false)
  const inner = memoryStorage({ paged })
  const sealed = await open(inner, true)
  const [{ session_id, ids }] = await Promise.all([fill(clear), fill(sealed)])
  await Promise.all([clear.close(), sealed.close()])
  return { c: await open(clearInner, false), s: await open(inner, true), inner, clearInner, session_id, ids }
}

/**
 * A stored box (bytes at rest) with one bit of its ciphertext flipped: a copy, as a storage hands
 * out a record read again.
 */
const flipped = (box: ArrayBuffer, at = 40): ArrayBuffer => {
  expect(box).toBeInstanceOf(ArrayBuffer)
  const b = new Uint8Array(box.slice(0))
  b[at]! ^= 1
  return b.buffer
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
      const { c, s, session_id } = await coldPair(paged)
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
      // The tail opens its own page; readers of the whole session open it whole and see what
      // a clear store shows.
      const tail = { session_id, limit: 5 }
      const held = sealedHeld(s, session_id)
      expect(await s.messagesTail(tail)).toEqual(await c.messagesTail(tail))
      expect(sealedHeld(s, session_id)).toBe(held - 5)
      const tree = (store: Store) =>
        firstValueFrom(store.tree$(session_id).pipe(filter((t) => t !== null && t.entries.size > 0)))
      const [st, ct] = await Promise.all([tree(s), tree(c)])
      expect([...st!.entries.values()]).toEqual([...ct!.entries.values()])
      expect(sealedHeld(s, session_id)).toBe(0)
      await Promise.all([c.close(), s.close()])
    })

    it('a snapshot of a session read in part opens its sealed entries for the copy only, reading nothing again', async () => {
      const { c, s, inner, session_id } = await coldPair(paged)
      const req = { session_id, limit: 10 }
      expect(await s.messages(req)).toEqual(await c.messages(req))
      const reads = vi.spyOn(inner, 'entries')
      let snap: Awaited<ReturnType<ReturnType<typeof hostOf>['snapshot']>>
      const n = await decrypts(async () => void (snap = await hostOf(s).snapshot(session_id)))
      // The held session's sealed entries, once each, and no read of the storage.
      expect(n).toBe(N - 10)
      expect(reads).not.toHaveBeenCalled()
      reads.mockRestore()
      const want = (await hostOf(c).snapshot(session_id))!
      expect([...snap!.entries.values()]).toEqual([...want.entries.values()])
      expect(snap!.head.leaf).toBe(want.head.leaf)
      // Nothing kept opened: what the store holds sealed stays sealed.
      expect(sealedHeld(s, session_id)).toBe(N - 10)
      await Promise.all([c.close(), s.close()])
    })

    it('live queries, writes and forks on a session read in part see plaintext as before', async () => {
      const { c, s, inner, clearInner, session_id, ids } = await coldPair(paged)
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
      // Flip a bit of the 5th entry's box on disk (its ciphertext: the envelope still parses).
      const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: ArrayBuffer }>
      const bad = stored.find((e) => e.id === ids[4])!
      bad.box = flipped(bad.box)
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
      const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: ArrayBuffer }>
      const keyOf = (box: ArrayBuffer) => {
        const b = new Uint8Array(box)
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
      await firstValueFrom(again.tree$(session_id).pipe(filter((t) => t !== null && t.entries.size > 0)))
      expect(sealedHeld(again, session_id)).toBe(0)
      expect(engine.cache!.bytes).toBe(weight())
      await again.close()
    })
  })
}

// The live list and the ranged reads open only what they return. A session of 2,500 entries
// whose active path is 20 (a long branch beside it), and a middle branch to switch to.
const BIG = 2_500
const ACTIVE = 20
const OTHER = 30

const say = (i: number, tag = ''): AgentMessage =>
  i % 2 === 0
    ? { role: 'user', content: [{ type: 'text', text: `ask ${i}${tag}` }], timestamp: i }
    : {
        role: 'assistant',
        content: [{ type: 'text', text: `reply ${i}${tag}` }],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: i,
      }

/** The big session: a root, then a branch of `BIG - ACTIVE - OTHER + 1` entries, one of `OTHER - 1` and the active one of `ACTIVE - 1`, each from the root. */
function bigSession(session_id: string): SessionImport & { active: string[]; other: string[] } {
  const entries: SessionEntry[] = []
  const put = (id: string, parent: string | null): string => {
    const i = entries.length
    entries.push({
      id,
      parent_id: parent,
      timestamp: 10_000 + i,
      revision: 0,
      kind: 'message',
      message: say(i),
    })
    return id
  }
  const root = put('m_root', null)
  const branch = (name: string, n: number): string[] => {
    const ids = [root]
    for (let k = 0; k < n; k++) ids.push(put(`m_${name}_${k}`, ids[ids.length - 1]!))
    return ids
  }
  branch('long', BIG - ACTIVE - OTHER + 1)
  const other = branch('other', OTHER - 1)
  const active = branch('active', ACTIVE - 1)
  const meta = {
    session_id,
    title: 'big',
    description: '',
    status: 'idle' as const,
    kind: 'user' as const,
    created_at: 10_000,
    updated_at: 10_000,
    message_count: entries.length,
  }
  return { meta, entries, active_leaf: active[active.length - 1]!, active, other }
}

/** How many entries `store`'s storage is asked to open from now on. */
function openCount(store: Store): () => number {
  const storage = store.storage
  const open = storage.openEntries!.bind(storage)
  let n = 0
  storage.openEntries = (session_id, entries) => {
    n += entries.length
    return open(session_id, entries)
  }
  return () => n
}

/** A live `messages$` list: the latest value, and a wait for one that passes a test. */
function watchList(store: Store, session_id: string) {
  const latest = new BehaviorSubject<MessageItem[] | undefined>(undefined)
  let count = 0
  const sub = store.messages$({ session_id }).subscribe({
    next: (v) => {
      count++
      latest.next(v)
    },
    error: (e) => latest.error(e),
  })
  return {
    until: (ok: (items: MessageItem[]) => boolean) =>
      firstValueFrom(latest.pipe(filter((v): v is MessageItem[] => v !== undefined && ok(v)))),
    get emitted() {
      return count
    },
    stop: () => sub.unsubscribe(),
  }
}

const textOf = (items: readonly MessageItem[]): string => JSON.stringify(items)

describe('an encrypted store’s live list and ranged reads open only what they return', () => {
  it(`a cold messages$ of a ${BIG}-entry session opens its path only, and updates as a clear store's on every kind of write`, async () => {
    const session_id = 's_big'
    const data = bigSession(session_id)
    const clearInner = memoryStorage()
    const sealedInner = memoryStorage()
    for (const [inner, encrypted] of [
      [clearInner, false],
      [sealedInner, true],
    ] as const) {
      const store = await open(inner, encrypted)
      await store.importSession(data)
      await store.close()
    }
    // Two tabs of each store (the second writes as another tab does), ids kept apart.
    const tab = (inner: Storage, encrypted: boolean, prefix: string) => {
      let n = 0
      return open(inner, encrypted, { multiTab: true, newId: (kind: string) => `${prefix}${kind[0]}_${++n}` })
    }
    const c = await tab(clearInner, false, 'a')
    const s = await tab(sealedInner, true, 'a')
    const opened = openCount(s)
    const cl = watchList(c, session_id)
    let sl!: ReturnType<typeof watchList>
    // The first value: the 20 entries of the path (and the head's sealed fields), not 10,000.
    const first = await decrypts(async () => {
      sl = watchList(s, session_id)
      const [sv, cv] = await Promise.all([sl.until(() => true), cl.until(() => true)])
      expect(sv.map((m) => m.entry_id)).toEqual(data.active)
      expect(sv).toEqual(cv)
    })
    expect(first).toBeLessThanOrEqual(ACTIVE + 6)
    expect(opened()).toBe(ACTIVE)
    expect(sealedHeld(s, session_id)).toBe(BIG - ACTIVE)
    /** After a write made to both stores: both lists pass `ok`, and are equal. */
    const same = async (ok: (items: MessageItem[]) => boolean): Promise<void> => {
      const [sv, cv] = await Promise.all([sl.until(ok), cl.until(ok)])
      expect(sv).toEqual(cv)
    }
    // Another tab's writes, relayed: a branch switch opens here the branch switched to only.
    const cb = await tab(clearInner, false, 'b')
    const sb = await tab(sealedInner, true, 'b')
    const otherLeaf = data.other[data.other.length - 1]!
    for (const st of [sb, cb]) await st.setActiveLeaf({ session_id, entry_id: otherLeaf })
    await same((v) => v.length === OTHER)
    expect(opened()).toBe(ACTIVE + OTHER - 1)
    expect(sealedHeld(s, session_id)).toBe(BIG - ACTIVE - OTHER + 1)
    // Its append and its edit of a message on the path come opened: nothing more to open here.
    for (const st of [sb, cb]) await st.append({ session_id, message: say(2, ' from the other tab') })
    await same((v) => textOf(v).includes('from the other tab'))
    for (const st of [sb, cb])
      await st.updateMessage({
        session_id,
        entry_id: data.other[3]!,
        content: [{ type: 'text', text: 'edited there' }],
      })
    await same((v) => textOf(v).includes('edited there'))
    expect(opened()).toBe(ACTIVE + OTHER - 1)
    // This tab's own writes, which open nothing themselves (the message edited is on the path
    // shown, opened already): an append, an edit, a switch back to the first branch.
    const beforeOwn = opened()
    const appended = await Promise.all(
      [s, c].map((st) => st.append({ session_id, message: say(1, ' appended') })),
    )
    expect(appended[0]).toEqual(appended[1])
    await same((v) => textOf(v).includes('appended'))
    for (const st of [s, c])
      await st.updateMessage({
        session_id,
        entry_id: data.other[5]!,
        content: [{ type: 'text', text: 'edited' }],
      })
    await same((v) => textOf(v).includes('edited"'))
    for (const st of [s, c]) await st.setActiveLeaf({ session_id, entry_id: data.active[ACTIVE - 1]! })
    await same((v) => v.at(-1)?.entry_id === data.active[ACTIVE - 1])
    // A write that finds its head changed on disk (the other tab's commit, relayed as it ran)
    // reads the session again sealed, keeping what it opened: the list opens nothing again.
    expect(opened() - beforeOwn).toBe(0)
    // A synced change (as sync applies what it pulls): an entry and the leaf moved to it.
    const pulled: SessionEntry = {
      id: 'm_pulled',
      parent_id: data.active[ACTIVE - 1]!,
      timestamp: 90_000,
      revision: 0,
      kind: 'message',
      message: say(3, ' synced'),
    }
    for (const st of [s, c])
      await st.applyReplica(
        [
          { type: 'entry', session_id, entry: pulled },
          { type: 'leaf', session_id, entry_id: 'm_pulled' },
        ],
        { policy: 'pull' },
      )
    await same((v) => v.at(-1)?.entry_id === 'm_pulled' && v.length === ACTIVE + 1)
    for (const l of [sl, cl]) l.stop()
    await Promise.all([c, s, cb, sb].map((st) => st.close()))
  })

  it('messagesTail and messagesRange of a cold session open their page (tool runs included), and answer as a clear store does', async () => {
    const session_id = 's_runs'
    // A path of 400 entries in turns: a question, an assistant calling a tool, its result, an answer.
    const entries: SessionEntry[] = []
    let parent: string | null = null
    const put = (message: AgentMessage): void => {
      const id = `r_${String(entries.length).padStart(4, '0')}`
      entries.push({
        id,
        parent_id: parent,
        timestamp: 20_000 + entries.length,
        revision: 0,
        kind: 'message',
        message,
      })
      parent = id
    }
    for (let t = 0; t < 100; t++) {
      put({ role: 'user', content: [{ type: 'text', text: `q${t}` }], timestamp: t })
      put({
        role: 'assistant',
        content: [
          { type: 'thinking', text: `think ${t}` },
          { type: 'function_call', id: `c${t}`, function_id: 'search', arguments: { q: `q${t}` } },
        ],
        stop_reason: 'function_call',
        model: 'm',
        provider: 'p',
        timestamp: t,
      } as AgentMessage)
      put({
        role: 'function_result',
        function_call_id: `c${t}`,
        function_id: 'search',
        content: [{ type: 'text', text: `found ${t}` }],
        details: null,
        is_error: false,
        timestamp: t,
      } as AgentMessage)
      put(say(1, ` answer ${t}`))
    }
    const data: SessionImport = {
      meta: {
        session_id,
        title: 'runs',
        description: '',
        status: 'idle',
        kind: 'user',
        created_at: 20_000,
        updated_at: 20_000,
        message_count: entries.length,
      },
      entries,
      active_leaf: parent,
    }
    const clearInner = memoryStorage()
    const sealedInner = memoryStorage()
    for (const [inner, encrypted] of [
      [clearInner, false],
      [sealedInner, true],
    ] as const) {
      const store = await open(inner, encrypted)
      await store.importSession(data)
      await store.close()
    }
    const id = (i: number) => entries[i]!.id
    const requests: Array<[string, (st: Store) => Promise<unknown>, number]> = [
      ['tail', (st) => st.messagesTail({ session_id, limit: 6 }), 8],
      ['tail before', (st) => st.messagesTail({ session_id, limit: 5, before_entry_id: id(202) }), 6],
      ['tail until', (st) => st.messagesTail({ session_id, limit: 2, until_entry_id: id(380) }), 20],
      ['tail without custom', (st) => st.messagesTail({ session_id, limit: 3, include_custom: false }), 4],
      [
        'range',
        (st) => st.messagesRange({ session_id, from_entry_id: id(100), to_entry_id: id(300), limit: 10 }),
        10,
      ],
      ['range ids', (st) => st.messagesRange({ session_id, entry_ids: [id(7), id(250), id(3)] }), 3],
    ]
    for (const [what, read, shown] of requests) {
      // Each read on a cold store opens about its page: a tail looks at the entry before its
      // oldest block (where that block starts), and may open a few entries past it, asked
      // for ahead while it walks back through a tool run.
      const c = await open(clearInner, false)
      const s = await open(sealedInner, true)
      const opened = openCount(s)
      let sealed: unknown
      const n = await decrypts(async () => void (sealed = await read(s)))
      expect(sealed, what).toEqual(await read(c))
      expect((sealed as { messages: unknown[] }).messages.length, what).toBe(shown)
      const most = what.startsWith('range') ? shown : 2 * shown + 4
      expect(opened(), what).toBeLessThanOrEqual(most)
      expect(n, what).toBeLessThanOrEqual(most + 6)
      expect(sealedHeld(s, session_id), what).toBe(entries.length - opened())
      await Promise.all([c.close(), s.close()])
    }
    // A cursor through a range, and tail pages back to the start: the same answers as clear.
    const c = await open(clearInner, false)
    const s = await open(sealedInner, true)
    const span = { session_id, from_entry_id: id(10), to_entry_id: id(60), limit: 7 }
    let [sr, cr] = await Promise.all([s.messagesRange(span), c.messagesRange(span)])
    for (;;) {
      expect(sr).toEqual(cr)
      if (!cr.next_cursor) break
      ;[sr, cr] = await Promise.all([
        s.messagesRange({ ...span, cursor: sr.next_cursor! }),
        c.messagesRange({ ...span, cursor: cr.next_cursor }),
      ])
    }
    let [st, ct] = await Promise.all([
      s.messagesTail({ session_id, limit: 9 }),
      c.messagesTail({ session_id, limit: 9 }),
    ])
    for (;;) {
      expect(st).toEqual(ct)
      if (!ct.has_more) break
      ;[st, ct] = await Promise.all([
        s.messagesTail({ session_id, limit: 9, before_entry_id: st.oldest_entry_id! }),
        c.messagesTail({ session_id, limit: 9, before_entry_id: ct.oldest_entry_id! }),
      ])
    }
    await Promise.all([c.close(), s.close()])
  })

  it('an optimistic messages$ opens its path only, and shows a write in flight as a clear store does', async () => {
    const session_id = 's_big'
    const data = bigSession(session_id)
    const stores: Store[] = []
    for (const encrypted of [true, false]) {
      const inner = memoryStorage()
      const store = await open(inner, encrypted)
      await store.importSession(data)
      await store.close()
      stores.push(await open(inner, encrypted))
    }
    const opened = openCount(stores[0]!)
    const lists = stores.map((st) => {
      const latest = new BehaviorSubject<MessageItem[] | undefined>(undefined)
      const sub = st.messages$({ session_id, optimistic: true }).subscribe({
        next: (v) => latest.next(v),
        error: (e) => latest.error(e),
      })
      const until = (ok: (v: MessageItem[]) => boolean) =>
        firstValueFrom(latest.pipe(filter((v): v is MessageItem[] => v !== undefined && ok(v))))
      return { until, stop: () => sub.unsubscribe() }
    })
    const [sv, cv] = await Promise.all(lists.map((l) => l.until(() => true)))
    expect(sv).toEqual(cv)
    expect(sv!.map((m) => m.entry_id)).toEqual(data.active)
    expect(opened()).toBe(ACTIVE)
    // Shown when handed to the storage (before the commit), in both.
    const appends = stores.map((st) => st.append({ session_id, message: say(4, ' in flight') }))
    const shown = await Promise.all(lists.map((l) => l.until((v) => textOf(v).includes('in flight'))))
    expect(shown[0]).toEqual(shown[1])
    expect(await appends[0]).toEqual(await appends[1])
    for (const l of lists) l.stop()
    await Promise.all(stores.map((st) => st.close()))
  })

  it('a tampered entry is refused by the live list or the tail that shows it, and only by those', async () => {
    const session_id = 's_big'
    const data = bigSession(session_id)
    const inner = memoryStorage()
    const store = await open(inner, true)
    await store.importSession(data)
    await store.close()
    const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: ArrayBuffer }>
    for (const id of [data.active[7]!, 'm_long_50']) {
      const bad = stored.find((e) => e.id === id)!
      bad.box = flipped(bad.box)
    }
    const s = await open(inner, true)
    // On the path: the subscriber sees session/integrity, and no list, whole or in part.
    const seen = await new Promise<unknown>((resolve) =>
      s.messages$({ session_id }).subscribe({ next: (v) => resolve(v), error: resolve }),
    )
    expect((seen as SessionError).code).toBe('session/integrity')
    expect(await code(s.messagesTail({ session_id, limit: 15 }))).toBe('session/integrity')
    expect(await code(s.messagesRange({ session_id, entry_ids: [data.active[7]!] }))).toBe(
      'session/integrity',
    )
    // Not shown, not opened: a tail that stops short of it, and the list of a branch without it.
    const tail = await s.messagesTail({ session_id, limit: 5 })
    expect(tail.messages.map((m) => m.entry_id)).toEqual(data.active.slice(-5))
    // (A write opens only what it reads: see the writes' tests below.)
    const other = await firstValueFrom(
      s.messages$({ session_id, from_entry_id: data.other[data.other.length - 1]! }),
    )
    expect(other.map((m) => m.entry_id)).toEqual(data.other)
    await s.close()
  })

  it('a lock while messages$ is open: the list goes quiet, and shows the same again once unlocked', async () => {
    const session_id = 's_big'
    const data = bigSession(session_id)
    const inner = memoryStorage()
    const store = await open(inner, true)
    await store.importSession(data)
    await store.close()
    const s = await open(inner, true)
    const l = watchList(s, session_id)
    const before = await l.until(() => true)
    await s.lock()
    expect(engineOf(s).state.sessions.size).toBe(0)
    // A lock as the list is first read (its entries loading) errs nothing either.
    const late = watchList(s, session_id)
    await s.unlock(passphrase)
    const [after, lateList] = await Promise.all([
      l.until((v) => v !== before),
      late.until((v) => v.length > 0),
    ])
    expect(after).toEqual(before)
    expect(lateList).toEqual(before)
    expect(sealedHeld(s, session_id)).toBe(BIG - ACTIVE)
    l.stop()
    late.stop()
    await s.close()
  })
})

/** What a call gave: its answer, or its error's code. */
const outcome = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    return { ok: await p }
  } catch (e) {
    return { error: e instanceof SessionError ? e.code : String(e) }
  }
}

/** The big session imported into a clear and an encrypted memory storage, both closed. */
async function bigStorages(session_id: string, paged = false) {
  const data = bigSession(session_id)
  const clearInner = memoryStorage({ paged })
  const sealedInner = memoryStorage({ paged })
  for (const [inner, encrypted] of [
    [clearInner, false],
    [sealedInner, true],
  ] as const) {
    const store = await open(inner, encrypted)
    await store.importSession(data)
    await store.close()
  }
  return { data, clearInner, sealedInner }
}

describe('a session read again sealed keeps the entries it opened', () => {
  const PATH = 900
  const ROUNDS = 4
  const EACH = 3

  const idAt = (i: number): string => `m_p_${String(i).padStart(4, '0')}`

  /** One branch of `PATH` messages. */
  const pathSession = (session_id: string): SessionImport => {
    const entries: SessionEntry[] = []
    for (let i = 0; i < PATH; i++)
      entries.push({
        id: idAt(i),
        parent_id: i ? idAt(i - 1) : null,
        timestamp: 10_000 + i,
        revision: 0,
        kind: 'message',
        message: say(i),
      })
    const meta = {
      session_id,
      title: 'path',
      description: '',
      status: 'idle' as const,
      kind: 'user' as const,
      created_at: 10_000,
      updated_at: 10_000,
      message_count: PATH,
    }
    return { meta, entries, active_leaf: entries[PATH - 1]!.id }
  }

  it(`another store's appends to a ${PATH}-entry path: each write here that finds them reads the session again, and messages$ opens only the new entries`, async () => {
    const session_id = 's_path'
    const inner = memoryStorage()
    const writer = await open(inner, true)
    await writer.importSession(pathSession(session_id))
    await writer.close()
    // Two stores on one storage that do not hear each other (no relay): `a` learns of `b`'s
    // writes only when its own write finds its head changed and reads the session again.
    const tab = (prefix: string) => {
      let n = 0
      return open(inner, true, { newId: (kind: string) => `${prefix}${kind[0]}_${++n}` })
    }
    const [a, b] = [await tab('a'), await tab('b')]
    const opened = openCount(a)
    const l = watchList(a, session_id)
    expect((await l.until((v) => v.length === PATH)).at(-1)?.entry_id).toBe(idAt(PATH - 1))
    expect(opened()).toBe(PATH)
    let length = PATH
    for (let round = 1; round <= ROUNDS; round++) {
      const theirs = await b.appendMany({
        session_id,
        messages: Array.from({ length: EACH }, (_, i) => say(i, ` theirs ${round}`)),
      })
      const before = opened()
      let mine = ''
      const n = await decrypts(async () => {
        mine = (await a.append({ session_id, message: say(1, ` mine ${round}`) })).entry_id
        length += EACH + 1
        const v = await l.until((x) => x.length === length)
        expect(v.slice(-EACH - 1).map((m) => m.entry_id)).toEqual([...theirs.entry_ids, mine])
        expect(textOf(v.slice(-EACH - 1))).toContain(` theirs ${round}`)
      })
      // Their entries only (the head's sealed fields aside), not the path again.
      expect(opened() - before).toBe(EACH)
      expect(n).toBeLessThanOrEqual(EACH + 6)
    }
    // An entry opened here that they edit (a new revision) is opened again, and shows the edit.
    const target = idAt(PATH - 10)
    await b.updateMessage({ session_id, entry_id: target, content: [{ type: 'text', text: 'edited there' }] })
    let before = opened()
    await a.setStatus({ session_id, status: 'working' })
    const edited = await l.until((v) => textOf(v).includes('edited there'))
    const there = (await b.getMessage({ session_id, entry_id: target }))!.entry
    expect(edited.find((m) => m.entry_id === target)!.message).toEqual(
      there.kind === 'message' && there.message,
    )
    expect(opened() - before).toBe(1)
    // One opened here whose box changes on disk at the same revision is opened again, and
    // refused: the live list errs rather than show the copy held.
    const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: ArrayBuffer }>
    const bad = stored.find((e) => e.id === idAt(5))!
    bad.box = flipped(bad.box)
    await b.setStatus({ session_id, status: 'idle' })
    before = opened()
    const error = new Promise<unknown>((resolve) =>
      a.messages$({ session_id }).subscribe({ next: () => undefined, error: resolve }),
    )
    await a.append({ session_id, message: say(2, ' after the flip') })
    expect(((await error) as SessionError).code).toBe('session/integrity')
    expect(opened() - before).toBeGreaterThanOrEqual(1)
    l.stop()
    await Promise.all([a.close(), b.close()])
  })
})

describe('an encrypted store’s writes, entry$ and branch$ open only what they read', () => {
  it.each([false, true])(
    `the first writes of a store opened cold open, of a ${BIG}-entry session, only the entries whose content they read, and answer as a clear store's (paged heads: %s)`,
    async (paged) => {
      const session_id = 's_big'
      const { data, clearInner, sealedInner } = await bigStorages(session_id, paged)
      let round = 0
      /**
       * `op` run on a clear and an encrypted store, each opened cold (ids of their own this round):
       * their answers (or error codes) are equal; returns how many entries the encrypted one opened
       * and how many values it decrypted (each entry is one).
       */
      const cold = async (
        op: (st: Store) => Promise<unknown>,
      ): Promise<{ opened: number; decrypted: number }> => {
        const prefix = `w${++round}`
        const tab = (inner: Storage, encrypted: boolean) => {
          let n = 0
          return open(inner, encrypted, { newId: (kind: string) => `${prefix}${kind[0]}_${++n}` })
        }
        const [c, s] = await Promise.all([tab(clearInner, false), tab(sealedInner, true)])
        const count = openCount(s)
        let sealedOutcome: unknown
        const decrypted = await decrypts(async () => {
          sealedOutcome = await outcome(op(s))
          await s.flush()
        })
        const opened = count()
        expect(sealedOutcome).toEqual(await outcome(op(c)))
        await Promise.all([c.close(), s.close()])
        return { opened, decrypted }
      }
      /** `op`, on cold stores, opens exactly `want` entries (and decrypts nothing else of the session). */
      const opens = async (want: number, op: (st: Store) => Promise<unknown>): Promise<void> => {
        const { opened, decrypted } = await cold(op)
        expect(opened).toBe(want)
        // Over paged heads the session's head is read on first use too (its sealed meta fields).
        expect(decrypted).toBeLessThanOrEqual(want + (paged ? 6 : 0))
      }
      const otherLeaf = data.other[data.other.length - 1]!
      // Writes that read no content: appends (one, several, in one tick, under a given parent, an
      // idempotent replay, a missing parent), a branch switch, a picked branch, title and status.
      await opens(0, (st) => st.append({ session_id, message: say(1, ' first') }))
      await opens(0, (st) =>
        Promise.all([0, 1, 2].map((i) => st.append({ session_id, message: say(i, ' in one tick') }))),
      )
      await opens(0, (st) =>
        st.append({ session_id, entry_id: 'm_given', parent_id: data.other[4]!, message: say(2, ' given') }),
      )
      await opens(0, (st) =>
        st.append({
          session_id,
          entry_id: 'm_given',
          parent_id: data.active[2]!,
          message: say(2, ' replay'),
        }),
      )
      await opens(0, (st) => st.append({ session_id, parent_id: 'm_nowhere', message: say(3) }))
      await opens(0, (st) =>
        st.append({
          session_id,
          custom: { custom_type: 'note', data: { n: 1 } },
          parent_id: data.active[3]!,
        }),
      )
      await opens(0, (st) => st.appendMany({ session_id, messages: [say(4, ' many'), say(5, ' many')] }))
      await opens(0, (st) => st.setActiveLeaf({ session_id, entry_id: otherLeaf }))
      await opens(0, (st) => st.selectBranch({ session_id, entry_id: data.active[1]! }))
      await opens(0, (st) => st.setMeta({ session_id, title: 'renamed' }))
      await opens(0, (st) => st.setStatus({ session_id, status: 'working', reason: 'r' }))
      // An edit reads the message it rewrites, and no other; refused ones read none.
      await opens(1, (st) =>
        st.updateMessage({
          session_id,
          entry_id: data.active[5]!,
          content: [{ type: 'text', text: 'edited' }],
        }),
      )
      await opens(1, (st) =>
        st.updateMessage({
          session_id,
          entry_id: data.other[2]!,
          expected_revision: 3,
          content: [{ type: 'text', text: 'stale' }],
        }),
      )
      await opens(0, (st) =>
        st.updateMessage({ session_id, entry_id: 'm_nowhere', content: [{ type: 'text', text: 'x' }] }),
      )
      // A fork copies its path, sealed again under the new session's ids: that path is opened.
      await opens(6, (st) => st.fork({ session_id, entry_id: data.active[5]! }))
      // Both stores hold the same session after it all (opened whole here, counted no more).
      const [c, s] = await Promise.all([open(clearInner, false), open(sealedInner, true)])
      const [ct, st] = await Promise.all([c, s].map((x) => firstValueFrom(x.tree$(session_id))))
      expect([...st!.entries.values()]).toEqual([...ct!.entries.values()])
      expect(st!.children).toEqual(ct!.children)
      expect(st!.active_leaf).toBe(ct!.active_leaf)
      expect(await s.get({ session_id })).toEqual(await c.get({ session_id }))
      await Promise.all([c.close(), s.close()])
    },
  )

  it('a write on a head another store changed reads the session again sealed, opens what it reads, and answers as a clear store', async () => {
    const session_id = 's_big'
    const { data, clearInner, sealedInner } = await bigStorages(session_id)
    // Two stores on each storage that do not hear each other: each finds its head stale. (A
    // batch that finds it so runs again: ids are given and the clock stands still, so the
    // stores' answers compare equal however many times each ran.)
    const pair = async (inner: Storage, encrypted: boolean) => {
      const a = await open(inner, encrypted, { now: () => 50_000 })
      const b = await open(inner, encrypted, { now: () => 50_000 })
      return [a, b] as const
    }
    const [[ca, cb], [sa, sb]] = await Promise.all([pair(clearInner, false), pair(sealedInner, true)])
    const opened = openCount(sa)
    const both = async (op: (st: Store) => Promise<unknown>, a: Store, c: Store): Promise<void> =>
      expect(await outcome(op(a))).toEqual(await outcome(op(c)))
    const appendOne = (entry_id: string) => (st: Store) =>
      st.append({ session_id, entry_id, message: say(1, ` ${entry_id}`) })
    await both(appendOne('m_a1'), sa, ca)
    await both((st) => st.append({ session_id, entry_id: 'm_b1', message: say(2, ' elsewhere') }), sb, cb)
    const edit = (st: Store) =>
      st.updateMessage({ session_id, entry_id: data.active[9]!, content: [{ type: 'text', text: 'after' }] })
    // The edited message is opened, the batch built, its head found stale, the session read
    // again sealed (the head's sealed fields opened) keeping the message opened: not 10,000.
    const n = await decrypts(() => both(edit, sa, ca))
    expect(opened()).toBe(1)
    expect(n).toBeLessThanOrEqual(1 + 6)
    // Stale again, for an append: read again sealed, nothing opened.
    await both((st) => st.setActiveLeaf({ session_id, entry_id: data.other[3]! }), sb, cb)
    await both(appendOne('m_a2'), sa, ca)
    expect(opened()).toBe(1)
    const [ct, st] = await Promise.all([ca, sa].map((x) => firstValueFrom(x.tree$(session_id))))
    expect([...st!.entries.values()]).toEqual([...ct!.entries.values()])
    expect(st!.active_leaf).toBe(ct!.active_leaf)
    await Promise.all([ca, cb, sa, sb].map((x) => x.close()))
  })

  it('deleteAttachment on a session held sealed opens no entry: it reads the references each entry holds clear, and answers as a clear store', async () => {
    const clearInner = memoryStorage()
    const sealedInner = memoryStorage()
    /** A session of 300 messages: one on the path and one on a side branch reference a file each. */
    const build = async (inner: Storage, encrypted: boolean) => {
      const st = await open(inner, encrypted)
      const { session_id } = await st.create({ title: 'files' })
      const put = (name: string) =>
        st.putAttachment({ session_id, file: new File([name], name, { type: 'text/plain' }) })
      const [used, aside, free] = [await put('used.txt'), await put('aside.txt'), await put('free.txt')]
      const ids: string[] = []
      for (let i = 0; i < 300; i++) {
        const text = { type: 'text' as const, text: `m ${i}` }
        const content = i === 150 ? [text, used.block] : [text]
        ids.push((await st.append({ session_id, message: { role: 'user', content, timestamp: i } })).entry_id)
      }
      await st.append({
        session_id,
        parent_id: ids[40]!,
        message: { role: 'user', content: [{ type: 'text', text: 'aside' }, aside.block], timestamp: 400 },
      })
      await st.close()
      const ids3 = [used, aside, free].map((a) => a.attachment.attachment_id)
      return { session_id, ids: ids3 }
    }
    const [{ session_id, ids }, clearBuilt] = await Promise.all([
      build(sealedInner, true),
      build(clearInner, false),
    ])
    expect(clearBuilt.ids).toEqual(ids)
    const [c, s] = await Promise.all([open(clearInner, false), open(sealedInner, true)])
    const opened = openCount(s)
    const [used, aside, free] = ids as [string, string, string]
    for (const attachment_id of [used, aside, free, free, 'a_nowhere']) {
      const req = { session_id, attachment_id }
      let got: unknown
      const n = await decrypts(async () => void (got = await outcome(s.deleteAttachment(req))))
      expect(got).toEqual(await outcome(c.deleteAttachment(req)))
      expect(n).toBe(0)
    }
    expect(opened()).toBe(0)
    expect(sealedHeld(s, session_id)).toBe(301)
    expect((await s.listAttachments({ session_id })).attachments.map((a) => a.attachment_id)).toEqual([
      used,
      aside,
    ])
    await Promise.all([c.close(), s.close()])
  })

  it('entry$ opens its entry alone and branch$ none; both, and tree$, show what a clear store shows', async () => {
    const session_id = 's_big'
    const { data, clearInner, sealedInner } = await bigStorages(session_id)
    const [c, s] = await Promise.all([open(clearInner, false), open(sealedInner, true)])
    const opened = openCount(s)
    /** The latest values of `of(store)` on both stores, waited for until both pass `ok`. */
    const watch = <T>(of: (st: Store) => import('rxjs').Observable<T>) => {
      const subjects = [c, s].map((st) => {
        const latest = new BehaviorSubject<{ v: T } | undefined>(undefined)
        const sub = of(st).subscribe({ next: (v) => latest.next({ v }), error: (e) => latest.error(e) })
        return { latest, sub }
      })
      return {
        until: async (ok: (v: T) => boolean): Promise<T> => {
          const [cv, sv] = await Promise.all(
            subjects.map(({ latest }) =>
              firstValueFrom(latest.pipe(filter((x): x is { v: T } => x !== undefined && ok(x.v)))),
            ),
          )
          expect(sv!.v).toEqual(cv!.v)
          return sv!.v
        },
        stop: () => subjects.forEach(({ sub }) => sub.unsubscribe()),
      }
    }
    const target = data.active[4]!
    const entry = watch((st) => st.entry$(session_id, target))
    const n = await decrypts(() => entry.until((e) => e !== null))
    expect(opened()).toBe(1)
    expect(n).toBeLessThanOrEqual(1)
    const missing = watch((st) => st.entry$(session_id, 'm_nowhere'))
    expect(await missing.until(() => true)).toBeNull()
    const branch = watch((st) => st.branch$(session_id, data.other[1]!))
    expect((await branch.until((b) => b !== null))!.count).toBe(3)
    const rootBranch = watch((st) => st.branch$(session_id, data.active[1]!))
    await rootBranch.until((b) => b !== null)
    expect(opened()).toBe(1)
    // Writes here: an edit of the entry watched (already opened), a sibling that moves the picker.
    for (const st of [s, c])
      await st.updateMessage({ session_id, entry_id: target, content: [{ type: 'text', text: 'new' }] })
    await entry.until((e) => e !== null && JSON.stringify(e).includes('"new"'))
    for (const st of [s, c])
      await st.append({ session_id, parent_id: data.other[0]!, entry_id: 'm_sibling', message: say(3) })
    expect((await branch.until((b) => b?.count === 4))!.siblings).toContain('m_sibling')
    expect(opened()).toBe(1)
    // The tree returns every entry's content: it opens the session whole.
    const tree = watch((st) => st.tree$(session_id))
    const t = await tree.until((x) => x !== null)
    expect(t!.entries.size).toBe(BIG + 1)
    expect(sealedHeld(s, session_id)).toBe(0)
    for (const w of [entry, missing, branch, rootBranch, tree]) w.stop()
    await Promise.all([c.close(), s.close()])
  })

  it('a tampered entry fails the entry$ and the writes that read it, and only those; a locked store writes nothing', async () => {
    const session_id = 's_big'
    const data = bigSession(session_id)
    const inner = memoryStorage()
    const store = await open(inner, true)
    await store.importSession(data)
    await store.close()
    const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: ArrayBuffer }>
    const bad = stored.find((e) => e.id === data.active[7]!)!
    bad.box = flipped(bad.box)
    const s = await open(inner, true)
    const before = await s.get({ session_id })
    const seen = await new Promise<unknown>((resolve) =>
      s.entry$(session_id, data.active[7]!).subscribe({ next: resolve, error: resolve }),
    )
    expect((seen as SessionError).code).toBe('session/integrity')
    const text = [{ type: 'text' as const, text: 'x' }]
    expect(await code(s.updateMessage({ session_id, entry_id: data.active[7]!, content: text }))).toBe(
      'session/integrity',
    )
    expect(await code(s.fork({ session_id, entry_id: data.active[8]! }))).toBe('session/integrity')
    // Nothing of those was written.
    expect(await s.get({ session_id })).toEqual(before)
    // Its position, an append under it and an edit of another read no content of it.
    const pos = await firstValueFrom(s.branch$(session_id, data.active[7]!))
    expect(pos).toEqual({ index: 0, count: 1, siblings: [data.active[7]!] })
    await s.append({ session_id, parent_id: data.active[7]!, message: say(1, ' under') })
    await s.updateMessage({ session_id, entry_id: data.active[6]!, content: text })
    await s.setActiveLeaf({ session_id, entry_id: data.other[2]! })
    // Locked: a write is refused and nothing is written; unlocked, it goes through.
    await s.lock()
    const append = () => s.append({ session_id, message: say(2, ' locked') })
    expect(await code(append())).toBe('session/locked')
    await s.unlock(passphrase)
    expect((await s.get({ session_id }))?.meta.message_count).toBe(BIG + 1)
    await append()
    expect((await s.get({ session_id }))?.meta.message_count).toBe(BIG + 2)
    await s.close()
  })
})
