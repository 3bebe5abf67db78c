import { memoryStorage, type ReplicaChange, type SessionEntry } from '@colloquy/core'
import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { PostgresFeed } from '../src/storage/postgres/feed.js'

const meta = {
  session_id: 's',
  title: '',
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: 1,
  updated_at: 1,
  message_count: 0,
} as const
const entry = (id: string): SessionEntry => ({
  id,
  parent_id: null,
  timestamp: 1,
  revision: 0,
  kind: 'message',
  message: { role: 'user', content: [], timestamp: 1 },
})

/** A pool that places every key it is asked about at `seq` and records every statement. */
function fakePool(seq = '30') {
  const statements: string[] = []
  const pool = {
    query: async (sql: string, [keys]: [string[]]) => (
      statements.push(sql),
      { rows: keys.map((key) => ({ key, seq })) }
    ),
  } as unknown as pg.Pool
  return { pool, statements }
}

function feed(pool: pg.Pool): PostgresFeed {
  const f = new PostgresFeed(memoryStorage(), pool, { pollMs: 1000, warn: () => {}, origin: 'test' })
  // No live reader in this test: only what a commit leaves for a push's answer.
  f.close()
  return f
}

describe('PostgreSQL feed: a push answer after its own commit', () => {
  it('places the changes its own commit wrote without a query', async () => {
    const { pool, statements } = fakePool()
    const f = feed(pool)
    const e1: ReplicaChange = { type: 'entry', session_id: 's', entry: entry('e1') }
    const leaf: ReplicaChange = { type: 'leaf', session_id: 's', entry_id: 'e1' }
    const m: ReplicaChange = { type: 'meta', meta }
    f.committed([
      { seq: 7, change: m, metadata: undefined },
      { seq: 8, change: e1, metadata: undefined },
      { seq: 9, change: leaf, metadata: undefined },
    ])
    expect(await f.positions([m, e1, leaf])).toEqual([7, 8, 9])
    // A later commit of the same things moves them.
    f.committed([{ seq: 12, change: leaf, metadata: undefined }])
    expect(await f.positions([e1, leaf])).toEqual([8, 12])
    expect(statements).toEqual([])
  })

  it('asks the database for what no commit of its own wrote, and after a delete', async () => {
    const { pool, statements } = fakePool('30')
    const f = feed(pool)
    const e1: ReplicaChange = { type: 'entry', session_id: 's', entry: entry('e1') }
    const leaf: ReplicaChange = { type: 'leaf', session_id: 's', entry_id: 'e1' }
    f.committed([{ seq: 8, change: e1, metadata: undefined }])
    const [known, asked] = await f.positions([e1, leaf])
    expect(known).toBe(8)
    expect(statements).toHaveLength(1)
    expect(asked).toBe(30)
    f.committed([{ seq: 40, change: { type: 'delete', session_id: 's' }, metadata: undefined }])
    expect(await f.positions([e1])).toEqual([30])
    expect(statements).toHaveLength(2)
  })

  it('keeps a bounded number of positions, the oldest sessions leaving first', async () => {
    const { pool, statements } = fakePool('1')
    const f = feed(pool)
    const leafOf = (id: string): ReplicaChange => ({ type: 'leaf', session_id: id, entry_id: null })
    for (let i = 0; i < 20_000; i++)
      f.committed([{ seq: 100 + i, change: leafOf(`s${i}`), metadata: undefined }])
    expect(await f.positions([leafOf('s19999')])).toEqual([20_099])
    expect(statements).toHaveLength(0)
    // The first sessions were let go: their positions come from the database.
    expect(await f.positions([leafOf('s0')])).toEqual([1])
    expect(statements).toHaveLength(1)
  })
})
