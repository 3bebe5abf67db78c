import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createStore, memoryStorage, type AgentMessage, type Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { enableSearch, type SearchResult } from '@colloquy/core/search'
import {
  FULL_TEXT_VERSION,
  migrate,
  TERM_COUNTS_OF_ROWS,
  TERM_COUNTS_VERSION,
} from '../../packages/server/src/storage/postgres/schema.js'
import { entryDoc, titleDoc } from '../../packages/server/src/search/search-doc.js'
import { toDb } from '../../packages/server/src/storage/postgres/codec.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { rpc, startServer } from '../server/helpers.js'

/**
 * The full-text migration on a database written before it: sessions and entries as the
 * previous version stored them (no terms), then a server of this version opens it. Every
 * message and title is found, with the answers a device gives over the same sessions.
 */
const ALICE = 'tok-alice-upgrade-0123'
let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

const said = (role: 'user' | 'assistant', text: string, timestamp: number): AgentMessage =>
  role === 'user'
    ? { role, content: [{ type: 'text', text }], timestamp }
    : { role, content: [{ type: 'text', text }], timestamp, stop_reason: 'end', model: 'm', provider: 'p' }

/** Alice's sessions, made by a store of the core: titles, a branch, an edit, a custom entry, and a long session. */
async function aliceSessions(): Promise<Store> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const meta = { metadata: { owner: 'alice' } }
  const a = (await store.create({ ...meta, title: 'Déjà vu over kiwi' })).session_id
  const first = await store.append({ session_id: a, message: said('user', 'kiwi orchard in 東京都', 1) })
  const second = await store.append({ session_id: a, message: said('assistant', 'Café kiwi résumé 🎉', 2) })
  // A branch off the first message, then back to the main line: one message off the active path.
  await store.append({
    session_id: a,
    parent_id: first.entry_id,
    message: said('user', 'kiwi on a side branch', 3),
  })
  await store.setActiveLeaf({ session_id: a, entry_id: second.entry_id })
  await store.updateMessage({
    session_id: a,
    entry_id: first.entry_id,
    content: [{ type: 'text', text: 'kiwi orchard in 東京都, edited' }],
  })
  const b = (await store.create(meta)).session_id
  // More entries than the migration reads at a time (1,000), so it crosses batches.
  await store.appendMany({
    session_id: b,
    messages: Array.from({ length: 1100 }, (_, i) =>
      said(i % 2 ? 'assistant' : 'user', `long session line ${i} ${i % 7 ? 'plum' : 'kiwi plum'}`, 10 + i),
    ),
  })
  return store
}

/**
 * Writes the store's sessions as rows of the schema at `version`: before full text (no terms), or
 * with full text but before the term counts (terms, lengths and sums as that version's commits
 * wrote them).
 */
async function writeOldRows(url: string, store: Store, version = FULL_TEXT_VERSION - 1): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migrate(pool, version)
    if (version >= FULL_TEXT_VERSION) {
      const host = hostOf(store)
      for await (const head of host.everyHead()) {
        const sid = head.meta.session_id
        await host.load(sid)
        const entries = [...host.entries(sid)!.values()]
        const docs = entries.map((e) => entryDoc(e, e.parent_id === null ? null : toDb(e.parent_id)))
        const title = titleDoc(head.meta)
        await pool.query(
          `INSERT INTO colloquy_sessions (id, owner, meta, leaf, v, bytes, title_terms, title_len, search_docs, search_len)
           VALUES ($1, $2, $3, $4, $5, 0, $6::tsvector, $7, $8, $9)`,
          [
            toDb(sid),
            'alice',
            JSON.stringify(head.meta),
            head.leaf && toDb(head.leaf),
            head.v,
            title?.terms ?? null,
            title?.len ?? null,
            docs.filter((d) => d.len !== null).length,
            docs.reduce((n, d) => n + (d.len ?? 0), 0),
          ],
        )
        for (const [i, e] of entries.entries())
          await pool.query(
            `INSERT INTO colloquy_entries (session_id, id, entry, terms, len, role, ts, parent)
             VALUES ($1, $2, $3, $4::tsvector, $5, $6, $7, $8)`,
            [
              toDb(sid),
              toDb(e.id),
              JSON.stringify(e),
              docs[i].terms,
              docs[i].len,
              docs[i].role,
              docs[i].ts,
              docs[i].parent,
            ],
          )
      }
      return
    }
    const host = hostOf(store)
    for await (const head of host.everyHead()) {
      const sid = head.meta.session_id
      await host.load(sid)
      await pool.query(
        'INSERT INTO colloquy_sessions (id, owner, meta, leaf, v, bytes) VALUES ($1, $2, $3, $4, $5, 0)',
        [toDb(sid), 'alice', JSON.stringify(head.meta), head.leaf && toDb(head.leaf), head.v],
      )
      for (const e of host.entries(sid)!.values())
        await pool.query('INSERT INTO colloquy_entries (session_id, id, entry) VALUES ($1, $2, $3)', [
          toDb(sid),
          toDb(e.id),
          JSON.stringify(e),
        ])
    }
  } finally {
    await pool.end()
  }
}

describe('full text on PostgreSQL: the upgrade from the version before it', () => {
  it.each([
    ['before full text', FULL_TEXT_VERSION - 1],
    ['with full text, before the term counts', TERM_COUNTS_VERSION - 1],
  ])(
    'from the version %s: fills the terms and their counts; searches then answer as a device over the same sessions',
    async (_, version) => {
      const url = await cluster.createDatabase()
      const old = await aliceSessions()
      await writeOldRows(url, old, version)
      const before = await cluster.query<{ v: number }>(
        'SELECT max(version) AS v FROM colloquy_migrations',
        [],
        url.slice(url.lastIndexOf('/') + 1),
      )
      expect(before.rows[0].v).toBe(version)

      const server = await startServer(['--postgres', url, '--token', `alice=${ALICE}`])
      try {
        // The store that made the sessions is a device holding them: its own index answers.
        const local = await enableSearch(old)
        try {
          const queries = [
            { query: 'kiwi', limit: 100 },
            { query: 'kiwi', limit: 100, active_path_only: true },
            { query: 'plum', limit: 5 },
            { query: 'line 1099' },
            { query: '京都' },
            { query: 'deja' },
            { query: 'cafe resume' },
            { query: '🎉' },
            { query: '"kiwi orchard"' },
            { query: 'edi' },
          ]
          let found = 0
          for (const request of queries) {
            const there = await rpc<SearchResult>(server.url, 'session::search', request, ALICE)
            found += there.hits.length
            expect([request, there]).toStrictEqual([
              request,
              JSON.parse(JSON.stringify(await local.query(request))),
            ])
          }
          // Not a comparison of empty answers: the old rows were found.
          expect(found).toBeGreaterThan(150)
          // The counts the migration filled are those of the documents (and "plum" in all 1,100
          // lines of the long session).
          const db = url.slice(url.lastIndexOf('/') + 1)
          const rows = async (sql: string) =>
            (await cluster.query<{ owner: string; term: string; df: string }>(sql, [], db)).rows
              .map((r) => `${r.owner} ${r.term} ${r.df}`)
              .sort()
          const kept = await rows('SELECT owner, term, df FROM colloquy_terms')
          expect(kept).toStrictEqual(await rows(TERM_COUNTS_OF_ROWS))
          expect(kept).toContain('alice plum 1100')
        } finally {
          local.close()
        }
      } finally {
        await old.close()
        await server.stop()
      }
    },
  )
})
