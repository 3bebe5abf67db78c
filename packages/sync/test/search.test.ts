import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '@colloquy/core'
import { enableSearch, type SearchHit, type SearchResult } from '@colloquy/core/search'
import { searchWithServer } from '../src/search.js'
import { TransportError, type Transport } from '../src/transport.js'

/** A transport that only searches, answering what it is given (a server is input too). */
const answering = (answer: () => Promise<unknown>): Transport =>
  ({ search: () => answer() }) as unknown as Transport

const hit = (over: Partial<SearchHit>): SearchHit => ({
  session_id: 's-remote',
  entry_id: 'e1',
  role: 'user',
  score: 1,
  snippet: { text: 'a kiwi', highlights: [[2, 6]] },
  on_active_path: true,
  timestamp: 1,
  ...over,
})

async function device() {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const { session_id } = await store.create({})
  await store.append({
    session_id,
    message: { role: 'user', content: [{ type: 'text', text: 'kiwi here' }], timestamp: 5 },
  })
  const local = await enableSearch(store)
  return { store, local, session_id, close: () => (local.close(), store.close()) }
}

describe('searchWithServer', () => {
  it("merges: best score first, then the newer; a hit once; the server's hits in sessions held here dropped; incomplete kept", async () => {
    const d = await device()
    try {
      const mine = await d.local.query({ query: 'kiwi' })
      const top = mine.hits[0].score
      const remote: SearchResult = {
        hits: [
          hit({ session_id: 's-a', score: top + 1, timestamp: 1 }),
          hit({ session_id: 's-b', score: top, timestamp: 999 }),
          hit({ session_id: 's-c', score: top, timestamp: 0 }),
          // The device holds this session: its own index answers for it.
          hit({ session_id: d.session_id, entry_id: 'stale', score: top + 5 }),
        ],
        incomplete: true,
      }
      const r = await searchWithServer(
        d.store,
        answering(async () => remote),
        { query: 'kiwi' },
        { local: d.local },
      )
      expect(r.server).toBe(true)
      expect(r.incomplete).toBe(true)
      expect(r.hits.map((h) => h.session_id)).toStrictEqual(['s-a', 's-b', d.session_id, 's-c'])
      const limited = await searchWithServer(
        d.store,
        answering(async () => remote),
        { query: 'kiwi', limit: 2 },
        { local: d.local },
      )
      expect(limited.hits.map((h) => h.session_id)).toStrictEqual(['s-a', 's-b'])
    } finally {
      await d.close()
    }
  })

  it('refuses a malformed server answer with a SessionError, before any of it is used', async () => {
    const d = await device()
    try {
      const bad: unknown[] = [
        null,
        { hits: 'x', incomplete: false },
        { hits: [] },
        { hits: Array.from({ length: 101 }, () => hit({})), incomplete: false },
        { hits: [hit({ role: 'root' as never })], incomplete: false },
        { hits: [hit({ entry_id: null })], incomplete: false },
        { hits: [hit({ score: Number.NaN })], incomplete: false },
        { hits: [hit({ snippet: { text: 'ab', highlights: [[1, 5]] } })], incomplete: false },
        { hits: [hit({ snippet: { text: 'ab', highlights: [[1, 1]] } })], incomplete: false },
      ]
      for (const answer of bad)
        await expect(
          searchWithServer(
            d.store,
            answering(async () => answer),
            { query: 'kiwi' },
            { local: d.local },
          ),
        ).rejects.toMatchObject({ code: 'session/invalid_request' })
    } finally {
      await d.close()
    }
  })

  it('a server out of reach: the device answers, incomplete; a refusal is thrown; a bad request is refused before sending', async () => {
    const d = await device()
    try {
      const offline = await searchWithServer(
        d.store,
        answering(async () => Promise.reject(new TransportError('network: down', true))),
        { query: 'kiwi' },
        { local: d.local },
      )
      expect([offline.server, offline.incomplete, offline.hits.length]).toStrictEqual([false, true, 1])
      await expect(
        searchWithServer(
          d.store,
          answering(async () => Promise.reject(new TransportError('unauthorized', false, 401))),
          { query: 'kiwi' },
        ),
      ).rejects.toMatchObject({ code: 'session/invalid_request' })
      let sent = 0
      await expect(
        searchWithServer(
          d.store,
          answering(async () => (sent++, { hits: [], incomplete: false })),
          { query: 'x', roles: ['root'] },
        ),
      ).rejects.toMatchObject({ code: 'session/invalid_request' })
      expect(sent).toBe(0)
    } finally {
      await d.close()
    }
  })
})
