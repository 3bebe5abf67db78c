import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createStore, memoryStorage, type AgentMessage, type Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { enableSearch, type SearchResult } from '@colloquy/core/search'
import { FULL_TEXT_VERSION, migrate } from '../../packages/server/src/storage/postgres/schema.js'
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

/** Writes the store's sessions as rows of the schema before full text (what that version's commits wrote). */
async function writeOldRows(url: string, store: Store): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migrate(pool, FULL_TEXT_VERSION - 1)
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
  it('fills the terms of every existing entry and title; searches then answer as a device over the same sessions', async () => {
    const url = await cluster.createDatabase()
    const old = await aliceSessions()
    await writeOldRows(url, old)
    const before = await cluster.query<{ v: number }>(
      'SELECT max(version) AS v FROM colloquy_migrations',
      [],
      url.slice(url.lastIndexOf('/') + 1),
    )
    expect(before.rows[0].v).toBe(FULL_TEXT_VERSION - 1)

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
      } finally {
        local.close()
      }
    } finally {
      await old.close()
      await server.stop()
    }
  })
})
