import { createStore, type ReplicaChange } from '@colloquy/core'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { arrayParam, textParam } from '../../packages/server/src/storage/postgres/binary-params.js'
import { postgresStorage } from '../../packages/server/src/storage/postgres/storage.js'
import { WORK_BUDGETS } from '../../packages/server/src/work.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// A large commit on PostgreSQL (a 1 MB push with its sessions' metas) writes its sessions and
// entries in several statements of about a pull page each, never one statement whose parameters
// the driver encodes in one go; still one transaction: the sizes kept per session are those of
// what is stored, the change log says which entries are new, and a failure leaves nothing.

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

const SESSIONS = 100
const tags = Array.from({ length: 400 }, (_, i) => `tag-${i}`)
const meta = (session_id: string, title: string) => ({
  session_id,
  title,
  description: '',
  status: 'idle' as const,
  kind: 'user' as const,
  created_at: 1,
  updated_at: 1,
  message_count: 0,
  metadata: { tags },
})
const entry = (id: string, text: string, revision = 0) => ({
  id,
  parent_id: null,
  timestamp: 1,
  revision,
  kind: 'message' as const,
  message: {
    role: 'user' as const,
    content: [{ type: 'text' as const, text: text.padEnd(3_000, 'x') }],
    timestamp: 1,
  },
})

/** A storage on a fresh database whose data statements (`WITH n AS …`) are counted. */
async function open(afterVersionBump?: (commit: number) => void, database?: string) {
  const url = database ?? (await cluster.createDatabase())
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  const counted = { writes: 0, mostEncoded: 0, received: 0 }
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown
    ;(client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      if (typeof a[0] === 'string' && a[0].startsWith('WITH n AS')) counted.writes++
      if (Array.isArray(a[1]))
        counted.mostEncoded = Math.max(
          counted.mostEncoded,
          a[1].reduce((n, p) => n + encodedByDriver(p), 0),
        )
      const result = query(...a)
      if (result instanceof Promise)
        void result.then(
          (r: pg.QueryResult) =>
            (counted.received += (r.rows ?? []).reduce((n, row) => n + receivedChars(row), 0)),
          () => {},
        )
      return result
    }
  })
  const storage = postgresStorage({ pool, pollMs: 60_000, afterVersionBump })
  const store = await createStore({ storage, multiTab: false })
  return { store, pool, counted, url }
}

/**
 * The characters of a parameter the driver encodes itself, in the turn it sends the statement:
 * a string's, and every element's of an array (it escapes each into an array literal); none of
 * a Buffer's (sent as it is, a copy).
 */
const encodedByDriver = (p: unknown): number =>
  typeof p === 'string'
    ? p.length
    : Array.isArray(p)
      ? p.reduce((n: number, e) => n + encodedByDriver(e), 0)
      : Buffer.isBuffer(p) || p === null || p === undefined
        ? 0
        : String(p).length

/** The characters of the strings in a result row (what the driver decoded). */
const receivedChars = (row: Record<string, unknown>): number =>
  Object.values(row).reduce((n: number, v) => n + (typeof v === 'string' ? v.length : 0), 0)

/** Per session: the size kept, and the size of what is stored (meta and entries as the database holds them). */
const sizes = async (pool: pg.Pool) =>
  (
    await pool.query<{ id: string; kept: string; stored: string; entries: number }>(
      `SELECT s.id, s.bytes AS kept, octet_length(s.meta::text) + coalesce((SELECT sum(octet_length(e.entry::text)) FROM colloquy_entries e WHERE e.session_id = s.id), 0) AS stored,
        (SELECT count(*)::int FROM colloquy_entries e WHERE e.session_id = s.id) AS entries FROM colloquy_sessions s ORDER BY s.id`,
    )
  ).rows

/** Sessions with one entry each, then one commit renaming every session, updating that entry and adding two. */
function changes() {
  const first: ReplicaChange[] = []
  const big: ReplicaChange[] = []
  for (let i = 0; i < SESSIONS; i++) {
    const id = `s${String(i).padStart(2, '0')}`
    first.push(
      { type: 'meta', create: true, meta: meta(id, id) },
      { type: 'entry', session_id: id, base_revision: null, entry: entry('old', 'old') },
    )
    big.push(
      { type: 'meta', meta: meta(id, `${id} renamed`) },
      { type: 'entry', session_id: id, base_revision: 0, entry: entry('old', 'old, edited', 1) },
      { type: 'entry', session_id: id, base_revision: null, entry: entry('a', 'a') },
      { type: 'entry', session_id: id, base_revision: null, entry: entry('b', 'b') },
    )
  }
  return { first, big }
}

it('a large commit is written in several statements, with every size and record as one statement writes them', async () => {
  const { store, pool, counted, url } = await open()
  try {
    const { first, big } = changes()
    await store.applyReplica(first, { policy: 'push' })
    // Far more than a statement's worth (metas with 400 tags, entries of 3 KB).
    expect(JSON.stringify(big).length).toBeGreaterThan(4 * WORK_BUDGETS.pullChars)
    counted.writes = 0
    counted.mostEncoded = 0
    const { turns, value: results } = await turnsDuring(() => store.applyReplica(big, { policy: 'push' }))
    expect(results.every((r) => r.status === 'applied')).toBe(true)
    expect(counted.writes).toBeGreaterThanOrEqual(4)
    // No statement of it left the driver more than a slice to encode in one turn (its parameters
    // were built in slices, as binary parameters), and the commit let other work run about once
    // per slice of what it built: its entries, metas and events, each encoded and then sent.
    expect(counted.mostEncoded).toBeLessThanOrEqual(WORK_BUDGETS.sliceChars)
    expect(turns).toBeGreaterThanOrEqual((2 * JSON.stringify(big).length) / WORK_BUDGETS.sliceChars)
    const rows = await sizes(pool)
    expect(rows).toHaveLength(SESSIONS)
    for (const r of rows) {
      expect(r.entries).toBe(3)
      expect(Number(r.kept)).toBe(Number(r.stored))
    }
    // The change log: each new entry `added` (the first commit's among them), each edit
    // `updated`, each rename a meta record.
    const kinds = (
      await pool.query<{ kind: string; n: number }>(
        `SELECT kind, count(*)::int AS n FROM colloquy_changes WHERE entry_id IS NOT NULL OR kind = 'meta' GROUP BY kind ORDER BY kind`,
      )
    ).rows
    expect(Object.fromEntries(kinds.map((k) => [k.kind, k.n]))).toStrictEqual({
      added: 3 * SESSIONS,
      meta: SESSIONS,
      updated: SESSIONS,
    })
    // A commit touching sessions whose heads this instance wrote last reads back digests of
    // their texts, not the texts (about 4 kB of meta each here).
    counted.received = 0
    const renamed = await store.applyReplica(
      big.flatMap((c): ReplicaChange[] =>
        c.type === 'meta' ? [{ ...c, meta: { ...c.meta, title: 'again' } }] : [],
      ),
      { policy: 'push' },
    )
    expect(renamed.every((r) => r.status === 'applied')).toBe(true)
    expect(counted.received).toBeLessThan(SESSIONS * 200)
    // A head another instance wrote meanwhile is read in full: this instance commits on it.
    const other = await open(undefined, url)
    try {
      const s00 = await other.store.applyReplica([{ type: 'meta', meta: meta('s00', 'other') }], {
        policy: 'push',
      })
      expect(s00[0].status).toBe('applied')
    } finally {
      await other.store.close()
      await other.pool.end()
    }
    counted.received = 0
    const third = await store.applyReplica(
      [{ type: 'entry', session_id: 's00', base_revision: null, entry: entry('t', 't') }],
      { policy: 'push' },
    )
    expect(third[0].status).toBe('applied')
    expect(counted.received).toBeGreaterThan(JSON.stringify(meta('s00', 'other')).length)
    const stored = (
      await pool.query<{ title: string; entries: number }>(
        `SELECT meta->>'title' AS title, (SELECT count(*)::int FROM colloquy_entries WHERE session_id = 's00') AS entries FROM colloquy_sessions WHERE id = 's00'`,
      )
    ).rows[0]
    expect(stored).toStrictEqual({ title: 'other', entries: 4 })
    // A small commit is still one statement.
    counted.writes = 0
    await store.applyReplica(
      [{ type: 'entry', session_id: 's00', base_revision: null, entry: entry('c', 'c') }],
      { policy: 'push' },
    )
    expect(counted.writes).toBe(1)
  } finally {
    await store.close()
    await pool.end()
  }
})

it('a large commit that fails after its statements leaves nothing of it', async () => {
  let failAt = -1
  const { store, pool, counted } = await open((n) => {
    if (n === failAt) throw new Error('crash before COMMIT')
  })
  try {
    const { first, big } = changes()
    await store.applyReplica(first, { policy: 'push' })
    const before = await sizes(pool)
    const log = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM colloquy_changes')).rows[0].n
    failAt = 2
    counted.writes = 0
    await expect(store.applyReplica(big, { policy: 'push' })).rejects.toMatchObject({
      code: 'session/storage',
    })
    expect(counted.writes).toBeGreaterThanOrEqual(4)
    expect(await sizes(pool)).toStrictEqual(before)
    expect(
      (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM colloquy_changes')).rows[0].n,
    ).toBe(log)
    expect(
      (
        await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM colloquy_sessions WHERE meta->>'title' LIKE '%renamed'`,
        )
      ).rows[0].n,
    ).toBe(0)
  } finally {
    await store.close()
    await pool.end()
  }
})

/** Counts turns of the event loop (setImmediate callbacks that ran) while `work` is pending. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; value: T }> {
  let turns = 0
  let done = false
  const tick = (): void => {
    if (done) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  try {
    const value = await work()
    return { turns, value }
  } finally {
    done = true
  }
}

describe('binary parameters', () => {
  // `text` holds no NUL (ids are escaped first, codec.ts); any other string, lone surrogates included.
  const text = fc.string({ unit: 'binary', maxLength: 40 }).map((t) => t.replaceAll('\u0000', '\\0'))
  const orNull = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 5 })

  it('PostgreSQL reads them as it reads the driver’s own encoding of the same values', async () => {
    const url = await cluster.createDatabase()
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    const free = async () => {}
    try {
      // Each parameter twice: as the driver encodes it, and built here; the database compares them.
      const same = async (type: string, values: unknown[], built: Buffer): Promise<void> => {
        const r = await pool.query<{ same: boolean; n: number | null }>(
          `SELECT $1::${type}[]::text[] IS NOT DISTINCT FROM $2::${type}[]::text[] AS same, cardinality($2::${type}[]) AS n`,
          [values, built],
        )
        expect(r.rows[0]).toStrictEqual({ same: true, n: values.length })
      }
      await fc.assert(
        fc.asyncProperty(
          fc.array(orNull(text), { maxLength: 30 }),
          fc.array(orNull(fc.jsonValue().map((v) => JSON.stringify(v))), { maxLength: 10 }),
          fc.array(orNull(fc.maxSafeInteger().map((n) => (n % 2 ? -n : n))), { maxLength: 10 }),
          fc.array(orNull(fc.boolean()), { maxLength: 10 }),
          async (texts, jsons, ints, bools) => {
            await same('text', texts, await arrayParam('text', texts, free))
            await same('json', jsons, await arrayParam('json', jsons, free))
            await same('int8', ints, await arrayParam('int8', ints, free))
            await same('bool', bools, await arrayParam('bool', bools, free))
            const parts = texts.filter((t): t is string => t !== null)
            const r = await pool.query<{ t: string }>('SELECT $1::text AS t', [
              await textParam(parts, free, { open: '[', sep: ',', close: ']' }),
            ])
            expect(Buffer.from(r.rows[0].t)).toStrictEqual(Buffer.from(`[${parts.join(',')}]`))
          },
        ),
        { numRuns: 150 },
      )
    } finally {
      await pool.end()
    }
  })

  it('are built in slices: told every value’s characters as it is built', async () => {
    const values = Array.from({ length: 2000 }, (_, i) => `value ${i} `.repeat(1 + (i % 50)))
    const total = values.reduce((n, v) => n + v.length, 0)
    let told = 0
    let most = 0
    let since = 0
    // A slicer as the commit's: a turn once a slice's worth was built.
    const built = async (chars: number): Promise<void> => {
      told += chars
      since += chars
      most = Math.max(most, since)
      if (since >= WORK_BUDGETS.sliceChars) since = 0
    }
    await arrayParam('json', values, built)
    expect(told).toBe(total)
    await textParam(values, built)
    expect(told).toBe(2 * total)
    // So no turn builds more than a slice and one value.
    expect(most).toBeLessThan(WORK_BUDGETS.sliceChars + Math.max(...values.map((v) => v.length)))
  })
})
