import { createStore, type SessionEntry, type Store } from '@colloquy/core'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../packages/server/src/storage/postgres/storage.js'
import { TERM_COUNTS_OF_ROWS } from '../../packages/server/src/storage/postgres/schema.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { sentStatements } from './sent-statements.js'

// The term counts search reads (`colloquy_terms`: per owner, how many documents hold each term)
// are kept by the commits themselves: after any sequence of writes through the engine on
// PostgreSQL (appends, edits that overwrite an entry, forks that copy entries, titles set and
// cleared, an owner changed, sessions deleted, imports in one piece and in chunks) they equal
// the counts made from the stored documents, and a term no document holds is gone.

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

async function open(): Promise<{ store: Store; pool: pg.Pool }> {
  const pool = new pg.Pool({ connectionString: await cluster.createDatabase(), max: 3 })
  const store = await createStore({
    storage: postgresStorage({ pool, pollMs: 60_000 }),
    multiTab: false,
  })
  return { store, pool }
}

type Count = { owner: string | null; term: string; df: number; tf_max: number }
const sorted = (rows: Count[]): Count[] =>
  rows
    .map((r) => ({ owner: r.owner, term: r.term, df: Number(r.df), tf_max: r.tf_max }))
    .sort((a, b) => (JSON.stringify([a.owner, a.term]) < JSON.stringify([b.owner, b.term]) ? -1 : 1))

/** The counts as the commits kept them, and as the stored documents make them. */
async function counts(pool: pg.Pool): Promise<{ kept: Count[]; made: Count[] }> {
  const kept = (await pool.query<Count>('SELECT owner, term, df, tf_max FROM colloquy_terms')).rows
  const made = (await pool.query<Count>(TERM_COUNTS_OF_ROWS)).rows
  return { kept: sorted(kept), made: sorted(made) }
}

const WORDS = ['kiwi', 'plum', 'fig', 'Déjà', 'vu', '東京都', 'apple', 'kiwi kiwi', 'fig fig fig']
const OWNERS = ['alice', 'bob', null] as const
const textOf = (picks: readonly number[]): string => picks.map((p) => WORDS[p % WORDS.length]).join(' ')
const said = (text: string, timestamp: number) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp,
})
const metadataOf = (owner: (typeof OWNERS)[number]) => (owner === null ? {} : { metadata: { owner } })

const pick = fc.integer({ min: 0, max: 1_000 })
const text = fc.array(fc.nat(), { minLength: 1, maxLength: 6 })
const op = fc.oneof(
  fc.record({ t: fc.constant('create' as const), owner: fc.constantFrom(...OWNERS), title: fc.option(text) }),
  fc.record({ t: fc.constant('append' as const), s: pick, text }),
  fc.record({ t: fc.constant('appendMany' as const), s: pick, texts: fc.array(text, { maxLength: 4 }) }),
  fc.record({ t: fc.constant('edit' as const), s: pick, e: pick, text }),
  fc.record({ t: fc.constant('fork' as const), s: pick, e: pick, title: fc.option(text) }),
  fc.record({ t: fc.constant('title' as const), s: pick, title: fc.option(text) }),
  fc.record({ t: fc.constant('owner' as const), s: pick, owner: fc.constantFrom(...OWNERS) }),
  fc.record({ t: fc.constant('delete' as const), s: pick }),
  fc.record({
    t: fc.constant('import' as const),
    owner: fc.constantFrom(...OWNERS),
    texts: fc.array(text, { minLength: 1, maxLength: 5 }),
    chunked: fc.boolean(),
  }),
)

/** Runs one operation; the sessions and their message entries are tracked in `live` to pick from. */
let imported = 0
async function apply(
  store: Store,
  live: Array<{ id: string; entries: string[] }>,
  o: typeof op extends fc.Arbitrary<infer T> ? T : never,
): Promise<void> {
  const at = (s: number) => live[s % live.length]
  if (o.t === 'create') {
    const { session_id } = await store.create({
      ...metadataOf(o.owner),
      ...(o.title && { title: textOf(o.title) }),
    })
    live.push({ id: session_id, entries: [] })
    return
  }
  if (o.t === 'import') {
    const session_id = `imported-${++imported}`
    const entries: SessionEntry[] = o.texts.map((t, i) => ({
      id: `e${i}`,
      parent_id: i ? `e${i - 1}` : null,
      timestamp: i + 1,
      revision: 0,
      kind: 'message',
      message: said(textOf(t), i + 1),
    }))
    const meta = {
      session_id,
      title: textOf(o.texts[0]),
      description: '',
      status: 'idle' as const,
      kind: 'user' as const,
      created_at: 0,
      updated_at: entries.length,
      message_count: entries.length,
      ...metadataOf(o.owner),
    }
    const active_leaf = entries[entries.length - 1].id
    if (!o.chunked) await store.importSession({ meta, entries, active_leaf })
    else {
      // Entries written before the session exists (chunks of 2), counted when it is committed.
      const writer = await store.beginImport(session_id, { chunkSize: 2 })
      for (let i = 0; i < entries.length; i += 2) await writer.append(entries.slice(i, i + 2))
      await writer.commit({ meta, active_leaf })
    }
    live.push({ id: session_id, entries: entries.map((e) => e.id) })
    return
  }
  if (!live.length) return
  const s = at(o.s)
  if (o.t === 'append') {
    const { entry_id } = await store.append({ session_id: s.id, message: said(textOf(o.text), 1) })
    s.entries.push(entry_id)
  } else if (o.t === 'appendMany') {
    if (!o.texts.length) return
    const { entry_ids } = await store.appendMany({
      session_id: s.id,
      messages: o.texts.map((t, i) => said(textOf(t), i)),
    })
    s.entries.push(...entry_ids)
  } else if (o.t === 'edit') {
    if (!s.entries.length) return
    await store.updateMessage({
      session_id: s.id,
      entry_id: s.entries[o.e % s.entries.length],
      content: [{ type: 'text', text: textOf(o.text) }],
    })
  } else if (o.t === 'fork') {
    if (!s.entries.length) return
    const { session_id } = await store.fork({
      session_id: s.id,
      entry_id: s.entries[o.e % s.entries.length],
      ...(o.title && { title: textOf(o.title) }),
    })
    const { messages } = await store.messages({ session_id })
    live.push({ id: session_id, entries: messages.map((m) => m.entry_id) })
  } else if (o.t === 'title') {
    await store.setMeta({ session_id: s.id, title: o.title ? textOf(o.title) : null })
  } else if (o.t === 'owner') {
    await store.setMeta({ session_id: s.id, metadata: o.owner === null ? {} : { owner: o.owner } })
  } else if (o.t === 'delete') {
    await store.delete({ session_id: s.id })
    live.splice(live.indexOf(s), 1)
  }
}
describe('term counts on PostgreSQL', () => {
  it('equal the counts of the stored documents after any sequence of writes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 20 }), async (ops) => {
        const { store, pool } = await open()
        try {
          const live: Array<{ id: string; entries: string[] }> = []
          for (const o of ops) {
            await apply(store, live, o)
            const { kept, made } = await counts(pool)
            // The counts equal; each term's `tf_max` bounds the most times a document holds it
            // (raised by additions, never lowered).
            expect([o, kept.map(({ tf_max: _, ...r }) => r)]).toStrictEqual([
              o,
              made.map(({ tf_max: _, ...r }) => r),
            ])
            for (const [i, k] of kept.entries()) expect(k.tf_max).toBeGreaterThanOrEqual(made[i].tf_max)
          }
        } finally {
          await store.close()
          await pool.end()
        }
      }),
      { numRuns: 8 },
    )
  }, 240_000)

  it('a term every document of an owner lost is removed; another owner keeps theirs', async () => {
    const { store, pool } = await open()
    try {
      const a = (await store.create({ metadata: { owner: 'alice' }, title: 'kiwi' })).session_id
      await store.append({ session_id: a, message: said('kiwi orchard', 1) })
      const b = (await store.create({ metadata: { owner: 'bob' } })).session_id
      await store.append({ session_id: b, message: said('kiwi', 1) })
      const kiwi = async () =>
        (
          await pool.query<Count>(
            "SELECT owner, df::int AS df FROM colloquy_terms WHERE term = 'kiwi' ORDER BY owner",
          )
        ).rows
      expect(await kiwi()).toStrictEqual([
        { owner: 'alice', df: 2 },
        { owner: 'bob', df: 1 },
      ])
      await store.delete({ session_id: a })
      expect(await kiwi()).toStrictEqual([{ owner: 'bob', df: 1 }])
      expect((await pool.query("SELECT 1 FROM colloquy_terms WHERE owner = 'alice'")).rows).toStrictEqual([])
    } finally {
      await store.close()
      await pool.end()
    }
  })

  it('a count a commit leaves as it was is not written again (an append rewrites the title with its words)', async () => {
    const { store, pool } = await open()
    try {
      const a = (await store.create({ metadata: { owner: 'alice' }, title: 'kiwi' })).session_id
      await store.append({ session_id: a, message: said('plum', 1) })
      // A row's version: a new one for each write of the row.
      const version = async (term: string) =>
        (
          await pool.query<{ xmin: string; df: number }>(
            "SELECT xmin::text, df::int AS df FROM colloquy_terms WHERE owner = 'alice' AND term = $1",
            [term],
          )
        ).rows[0]
      const kiwi = await version('kiwi')
      const plum = await version('plum')
      await store.append({ session_id: a, message: said('plum', 2) })
      expect(await version('kiwi')).toStrictEqual(kiwi)
      // The count the append changed was written.
      expect(await version('plum')).toMatchObject({ df: plum.df + 1 })
      expect((await version('plum')).xmin).not.toBe(plum.xmin)
    } finally {
      await store.close()
      await pool.end()
    }
  })

  it('are written by the change-log statement: a commit sends no statement of its own for them', async () => {
    const { store, pool } = await open()
    // Every statement the storage's connections send, by its text.
    const sent = sentStatements(pool)
    try {
      const a = (await store.create({ metadata: { owner: 'alice' }, title: 'kiwi' })).session_id
      const { entry_id } = await store.append({ session_id: a, message: said('kiwi orchard', 1) })
      const terms = (): string[] => sent.filter((q) => q.includes('colloquy_terms'))
      // An append adding terms, an edit removing one (its count falls to zero), a delete.
      for (const write of [
        () => store.append({ session_id: a, message: said('plum plum', 2) }),
        () => store.updateMessage({ session_id: a, entry_id, content: [{ type: 'text', text: 'fig' }] }),
        () => store.delete({ session_id: a }),
      ]) {
        sent.length = 0
        await write()
        expect(terms()).toHaveLength(1)
        expect(terms()[0]).toContain('UPDATE colloquy_clock')
      }
      expect((await pool.query("SELECT 1 FROM colloquy_terms WHERE owner = 'alice'")).rows).toStrictEqual([])
    } finally {
      await store.close()
      await pool.end()
    }
  })

  it('stay exact when two instances commit the same terms at once', async () => {
    const url = await cluster.createDatabase()
    const pools = [0, 1].map(() => new pg.Pool({ connectionString: url, max: 4 }))
    const stores = await Promise.all(
      pools.map((pool) =>
        createStore({ storage: postgresStorage({ pool, pollMs: 60_000 }), multiTab: false }),
      ),
    )
    try {
      const owners = ['alice', 'bob']
      // Each instance creates, appends to and deletes sessions of both owners, all at once.
      await Promise.all(
        stores.flatMap((store, k) =>
          Array.from({ length: 6 }, async (_, i) => {
            const owner = owners[(i + k) % 2]
            const { session_id } = await store.create({ metadata: { owner }, title: 'kiwi' })
            for (let j = 0; j < 4; j++)
              await store.append({ session_id, message: said(textOf([i, j, k, i + j]), j) })
            if (i % 3 === 0) await store.delete({ session_id })
          }),
        ),
      )
      const { kept, made } = await counts(pools[0])
      expect(kept.map(({ tf_max: _, ...r }) => r)).toStrictEqual(made.map(({ tf_max: _, ...r }) => r))
    } finally {
      for (const store of stores) await store.close()
      for (const pool of pools) await pool.end()
    }
  }, 60_000)
})
