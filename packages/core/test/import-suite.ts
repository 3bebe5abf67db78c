import { describe, expect, it } from 'vitest'
import { SessionError, type SessionEntry, type SessionMeta, type Store } from '../src/index.js'

// The incremental import (`store.beginImport`), run over memory storage in Node and over real
// IndexedDB in Chromium: what is visible before commit, after abort, after a refused chunk and
// after an import that died, all checked against what the storage itself holds.

export interface ImportHarness {
  /** A store on a fresh storage. */
  open(): Promise<Store>
  /** Another store on the same storage as `store` (another tab, or the app after a reload). */
  reopen(store: Store): Promise<Store>
}

export const entry = (i: number, parent: string | null, text = `entry ${i}`): SessionEntry =>
  ({
    id: `e${i}`,
    parent_id: parent,
    timestamp: 1_000 + i,
    revision: 0,
    kind: 'message',
    message: {
      role: i % 2 ? 'assistant' : 'user',
      content: [{ type: 'text', text }],
      timestamp: 1_000 + i,
      ...(i % 2 && { stop_reason: 'end', model: 'm', provider: 'p' }),
    },
  }) as SessionEntry

/** Entries `from`..`to - 1` of one chain (each the child of the one before). */
export const chain = (from: number, to: number, text?: (i: number) => string): SessionEntry[] =>
  Array.from({ length: to - from }, (_, k) =>
    entry(from + k, from + k === 0 ? null : `e${from + k - 1}`, text?.(from + k)),
  )

export const metaOf = (session_id: string): SessionMeta =>
  ({
    session_id,
    title: 'imported',
    description: '',
    status: 'idle',
    kind: 'user',
    created_at: 1_000,
    updated_at: 1_000,
    message_count: 0,
  }) as SessionMeta

/** Entry records the storage holds for a session, head or not. */
export const onDisk = async (store: Store, id: string): Promise<number> =>
  (await store.storage.entries(id)).length

const visible = async (store: Store, id: string): Promise<boolean> =>
  (await store.list({ limit: 500 })).sessions.some((s) => s.session_id === id) ||
  (await store.get({ session_id: id })) !== null

const rejection = (p: Promise<unknown>): Promise<SessionError> =>
  p.then(
    (v) => {
      throw new Error(`accepted: ${JSON.stringify(v).slice(0, 120)}`)
    },
    (e: unknown) => e as SessionError,
  )

export function importSuite(name: string, h: ImportHarness): void {
  describe(`incremental import over ${name}`, () => {
    it('appended chunks are on disk but nowhere in sight (list, get, live list, another store, a reopened one) until commit; then whole, with one created event', async () => {
      const a = await h.open()
      const created: string[] = []
      a.on('session::created').subscribe((e) => created.push(e.session_id))
      const lists: string[][] = []
      a.sessions$().subscribe((l) => lists.push(l.map((m) => m.session_id)))
      const w = await a.beginImport('imp')
      await w.append(chain(0, 700))
      await w.append(chain(700, 1500))
      expect(await onDisk(a, 'imp')).toBe(1500)
      const b = await h.reopen(a)
      for (const s of [a, b]) expect(await visible(s, 'imp')).toBe(false)
      expect((await rejection(a.messages({ session_id: 'imp' }))).code).toBe('session/not_found')
      expect(lists.flat()).not.toContain('imp')
      expect(created).toEqual([])
      // No updated_at: the newest entry's time is taken.
      const { updated_at: _, ...meta } = metaOf('imp')
      const done = await w.commit({ meta: meta as never, active_leaf: 'e1499' })
      expect(done).toEqual({ session_id: 'imp', entries: 1500 })
      expect(created).toEqual(['imp'])
      const got = await a.get({ session_id: 'imp' })
      expect(got?.meta).toMatchObject({ message_count: 1500, updated_at: 2_499, title: 'imported' })
      expect(lists.at(-1)).toContain('imp')
      const page = await a.messages({ session_id: 'imp', limit: 500 })
      expect(page.messages).toHaveLength(500)
      expect((await a.getMessage({ session_id: 'imp', entry_id: 'e1499' }))?.entry.parent_id).toBe('e1498')
      // A store opened now reads the same session from disk.
      const c = await h.reopen(a)
      expect((await c.get({ session_id: 'imp' }))?.meta.message_count).toBe(1500)
      // Nothing more goes through a committed writer.
      expect((await rejection(w.append(chain(1500, 1501)))).code).toBe('session/invalid_request')
    })

    it('abort drops every chunk written: nothing on disk, nothing visible, no event; the id is free again', async () => {
      const a = await h.open()
      const created: string[] = []
      a.on('session::created').subscribe((e) => created.push(e.session_id))
      const w = await a.beginImport('gone')
      await w.append(chain(0, 300))
      await w.append(chain(300, 600))
      expect(await onDisk(a, 'gone')).toBe(600)
      await w.abort()
      expect(await onDisk(a, 'gone')).toBe(0)
      expect(await visible(a, 'gone')).toBe(false)
      expect((await rejection(w.commit({ meta: metaOf('gone'), active_leaf: null }))).message).toContain(
        'aborted',
      )
      const again = await a.beginImport('gone')
      await again.append(chain(0, 2))
      await again.commit({ meta: metaOf('gone'), active_leaf: 'e1' })
      expect(created).toEqual(['gone'])
      expect(await onDisk(a, 'gone')).toBe(2)
    })

    it('an invalid entry in the third chunk refuses the whole import, naming it; the chunks before it are dropped', async () => {
      const a = await h.open()
      const created: string[] = []
      a.on('session::created').subscribe((e) => created.push(e.session_id))
      const w = await a.beginImport('bad')
      await w.append(chain(0, 400))
      await w.append(chain(400, 800))
      const third = chain(800, 1200)
      ;(third[17] as { message: unknown }).message = { role: 'wizard', content: [], timestamp: 0 }
      const e = await rejection(w.append(third))
      expect(e).toBeInstanceOf(SessionError)
      expect(e.code).toBe('session/invalid_request')
      expect(e.message).toContain('entries[817]')
      expect(await onDisk(a, 'bad')).toBe(0)
      expect((await rejection(w.commit({ meta: metaOf('bad'), active_leaf: null }))).message).toContain(
        'entries[817]',
      )
      expect(await visible(a, 'bad')).toBe(false)
      expect(created).toEqual([])
    })

    it('the tree is checked at commit: a duplicate id, a missing parent, a cycle, a foreign leaf or another session id in the meta write nothing', async () => {
      const a = await h.open()
      const cases: Array<
        [string, (w: Awaited<ReturnType<Store['beginImport']>>) => Promise<unknown>, string]
      > = [
        [
          'dup',
          async (w) => (await w.append(chain(0, 3)), w.append([entry(1, 'e0')])),
          'duplicate entry id e1',
        ],
        [
          'orphan',
          async (w) => (
            await w.append(chain(0, 3)),
            await w.append([entry(7, 'e5')]),
            w.commit({ meta: metaOf('orphan'), active_leaf: null })
          ),
          'parent e5 of e7 is missing',
        ],
        [
          'cycle',
          async (w) => (
            await w.append([entry(0, null), entry(1, 'e2'), entry(2, 'e1')]),
            w.commit({ meta: metaOf('cycle'), active_leaf: null })
          ),
          'cycle',
        ],
        [
          'leaf',
          async (w) => (await w.append(chain(0, 3)), w.commit({ meta: metaOf('leaf'), active_leaf: 'e9' })),
          'active_leaf',
        ],
        [
          'other',
          async (w) => (
            await w.append(chain(0, 3)),
            w.commit({ meta: metaOf('someone-else'), active_leaf: null })
          ),
          'meta.session_id',
        ],
      ]
      for (const [id, run, text] of cases) {
        const w = await a.beginImport(id)
        const e = await rejection(run(w))
        expect(e.code, id).toBe('session/invalid_request')
        expect(e.message, id).toContain(text)
        expect(await onDisk(a, id), id).toBe(0)
        expect(await visible(a, id), id).toBe(false)
      }
      expect(await visible(a, 'someone-else')).toBe(false)
    })

    it('an existing session, a second import of the same id and a bad id are refused before anything is written', async () => {
      const a = await h.open()
      await a.ensure({ session_id: 'taken' })
      expect((await rejection(a.beginImport('taken'))).message).toContain('already exists')
      const first = await a.beginImport('twice')
      const b = await h.reopen(a)
      for (const s of [a, b])
        expect((await rejection(s.beginImport('twice'))).message).toContain('being imported')
      await first.append(chain(0, 5))
      await first.commit({ meta: metaOf('twice'), active_leaf: 'e4' })
      expect((await rejection(a.beginImport('q\ud800'))).message).toContain('session_id')
      // A session created meanwhile (elsewhere) wins: the import is refused, its chunks dropped, the session kept.
      const late = await a.beginImport('race')
      await late.append(chain(0, 5))
      await b.ensure({ session_id: 'race', title: 'created elsewhere' })
      expect((await rejection(late.append(chain(5, 10)))).message).toContain('already exists')
      const kept = await h.reopen(a)
      expect((await kept.get({ session_id: 'race' }))?.meta.title).toBe('created elsewhere')
    })

    it('an import that died leaves nothing readable after a reopen, and the next import drops its chunks', async () => {
      const a = await h.open()
      // A writer never committed nor aborted: the app closed mid-import.
      const w = await a.beginImport('left')
      await w.append(chain(0, 250))
      const b = await h.reopen(a)
      expect(await visible(b, 'left')).toBe(false)
      expect((await rejection(b.messages({ session_id: 'left' }))).code).toBe('session/not_found')
      // What a crash leaves on disk (entries and the marker, no head), as if written by a process that is gone.
      await a.storage.transact(async () => ({
        deleted: new Set(),
        heads: new Map(),
        side: [{ store: 'kv', key: 'import:crashed', value: { started_at: 1 } }],
        entries: new Map([['crashed', new Map(chain(0, 40).map((e) => [e.id, e]))]]),
      }))
      const c = await h.reopen(a)
      expect(await visible(c, 'crashed')).toBe(false)
      expect(await onDisk(c, 'crashed')).toBe(40)
      const next = await c.beginImport('fresh')
      expect(await onDisk(c, 'crashed')).toBe(0)
      // The live import ('left', its writer still open in `a`) is not another's to drop.
      expect(await onDisk(c, 'left')).toBe(250)
      await next.abort()
      await w.abort()
      expect(await onDisk(c, 'left')).toBe(0)
    })

    it('commit hooks (the sync outbox) see every entry of the session in the commit that makes it visible', async () => {
      const a = await h.open()
      const seen: number[] = []
      a.addCommitHook((_applied, draft) => {
        const pre = draft.preloaded.get('hooked')
        if (pre) seen.push(pre.length)
        return []
      })
      const w = await a.beginImport('hooked')
      await w.append(chain(0, 120))
      await w.append(chain(120, 250))
      expect(seen).toEqual([])
      await w.commit({ meta: metaOf('hooked'), active_leaf: 'e249' })
      expect(seen).toEqual([250])
    })

    it('a chunk size that is not a positive integer is refused before anything is written', async () => {
      const a = await h.open()
      for (const chunkSize of [0, -1, 1.5, Number.NaN, Infinity]) {
        expect((await rejection(a.beginImport('sized', { chunkSize }))).message).toContain('chunkSize')
        expect(
          (
            await rejection(
              a.importSession(
                { meta: metaOf('sized'), entries: chain(0, 3), active_leaf: 'e2' },
                { chunkSize },
              ),
            )
          ).message,
        ).toContain('chunkSize')
      }
      expect(await onDisk(a, 'sized')).toBe(0)
      expect(await visible(a, 'sized')).toBe(false)
    })

    it('importSession writes through the same path: a bad entry in its last chunk leaves nothing', async () => {
      const a = await h.open()
      const entries = chain(0, 900)
      ;(entries[880] as { parent_id: unknown }).parent_id = 42
      const e = await rejection(
        a.importSession({ meta: metaOf('whole'), entries, active_leaf: null }, { chunkSize: 200 }),
      )
      expect(e.message).toContain('entries[880].parent_id')
      expect(await onDisk(a, 'whole')).toBe(0)
      expect(await visible(a, 'whole')).toBe(false)
      const progress: number[] = []
      await a.importSession(
        { meta: metaOf('whole'), entries: chain(0, 900), active_leaf: 'e899' },
        { chunkSize: 200, onProgress: (w) => progress.push(w) },
      )
      expect(progress).toEqual([200, 400, 600, 800, 900])
    })
  })
}
