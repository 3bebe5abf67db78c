import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres } from '../../support/postgres.js'
import { percentile } from '../subjects/measure.js'
import type { BenchRow, Workload } from '../types.js'
import { repoRoot } from './s4-server.js'
import { ENTRIES, PER_SESSION, load, memory, sessionOf, start, stop } from './s5-postgres.js'
import { bulkLoadPostgres } from '../subjects/postgres-bulk-load.js'
import { bulkLoadFile } from '../subjects/file-bulk-load.js'

/** Queries timed per storage after the first (`S7_QUERIES`, default 300), cycling through `QUERIES`. */
const ROUNDS = Number(process.env.S7_QUERIES ?? 300)
/**
 * How the data gets in: `bulk` (default), S5's sessions written straight into PostgreSQL's schema
 * or the file storage's layout by a loader checked against what the server itself writes
 * (`postgres-bulk-load.ts`, `file-bulk-load.ts`); `api`, pushed through the server as S5 does
 * (833 s for 1,000,000 entries).
 */
const LOAD = process.env.S7_LOAD === 'api' ? 'api' : 'bulk'
/** `S7_STORAGES=postgres` or `file`: one storage only (default both). */
const STORAGES = (process.env.S7_STORAGES ?? 'postgres,file')
  .split(',')
  .filter((s): s is 'postgres' | 'file' => s === 'postgres' || s === 'file')

/**
 * What a person types against S5's sessions (`session <s> message <i>: the quick brown fox …`):
 * a rare term, a rare term with a common one, three terms, a phrase, a prefix being typed, and
 * a word every message holds (which runs into the work budget: `incomplete`).
 */
const QUERIES = (k: number): Array<Record<string, unknown>> => {
  const s = (k * 7919) % Math.ceil(ENTRIES / PER_SESSION)
  return [
    { query: `${s} `, limit: 20 },
    { query: `session ${s} `, limit: 20 },
    { query: `message 42 fox `, limit: 20, session_ids: [`s5-${s}`] },
    { query: `"session ${s} message"`, limit: 20 },
    { query: `${String(s).slice(0, 3)}`, limit: 20 },
    { query: 'lazy dog ', limit: 20 },
  ]
}

/** How often the canary asks while the first search runs (each request awaited before the next). */
const CANARY_EVERY_MS = 20

/**
 * Another client's cheap request (`session::get` of S5's session 1) sent again and again until
 * `until` settles: its latencies say whether the first search (which may build an index) holds
 * the server for everyone else.
 */
async function canary(url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false
  void until.finally(() => (done = true)).catch(() => {})
  const lat: number[] = []
  while (!done) {
    const t0 = performance.now()
    const res = await fetch(`${url}/rpc/session::get`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 's5-1' }),
    })
    if (!res.ok) throw new Error(`S7 canary: HTTP ${res.status} ${await res.text()}`)
    await res.arrayBuffer()
    lat.push(performance.now() - t0)
    if (!done) await new Promise((r) => setTimeout(r, CANARY_EVERY_MS))
  }
  return lat
}

async function search(
  url: string,
  body: unknown,
): Promise<{ ms: number; incomplete: boolean; hits: number }> {
  const t0 = performance.now()
  const res = await fetch(`${url}/rpc/session::search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`S7 search: HTTP ${res.status} ${await res.text()}`)
  const answer = (await res.json()) as { hits: unknown[]; incomplete: boolean }
  return { ms: performance.now() - t0, incomplete: answer.incomplete, hits: answer.hits.length }
}

/**
 * S7: `session::search` on the server over S5's data (`S5_ENTRIES` entries, default 1,000,000,
 * in sessions of 100), on PostgreSQL and the file storage: the data pushed through the API, the
 * server restarted, the first search (which builds the index: every message read and
 * tokenized), then `S7_QUERIES` searches one after the other: p50 and p95 over HTTP.
 */
const s7: Workload = {
  id: 'S7',
  title: `server search: session::search over ${ENTRIES.toLocaleString('en-US')} entries, PostgreSQL and file storage`,
  env: 'node',
  async run(ctx) {
    const root = repoRoot()
    const rows: BenchRow[] = []
    const cluster = await startPostgres({ durable: true })
    try {
      for (const storage of STORAGES) {
        const dir = mkdtempSync(join(tmpdir(), 'colloquy-s7-'))
        const args =
          storage === 'file'
            ? ['--data-dir', join(dir, 'data')]
            : ['--postgres', await cluster.createDatabase()]
        const subject = storage === 'file' ? 'file storage' : 'postgres'
        try {
          const bulk = LOAD === 'bulk'
          const sessions = Math.ceil(ENTRIES / PER_SESSION)
          let loadMs: number
          if (bulk && storage === 'file')
            // Written with no server running on the directory; the loader checks itself against one of its own.
            loadMs = await bulkLoadFile(
              args[1],
              sessions,
              sessionOf,
              async (d) => {
                const s = await start(root, ['--data-dir', d])
                return { url: s.url, stop: () => stop(s) }
              },
              ctx.log,
            )
          else {
            const loading = await start(root, args)
            loadMs = bulk
              ? await bulkLoadPostgres(loading.url, args[1], sessions, sessionOf, ctx.log)
              : await load(loading.url, loading.child.pid, ctx.log)
            await stop(loading)
          }
          const server = await start(root, args)
          ctx.log(`${subject}: server started in ${server.startMs.toFixed(0)} ms`)
          // Before any search: what the server holds for its data alone (heads, change log), beside which the index's share shows.
          const started = memory(server.child.pid)
          const firstSearch = search(server.url, QUERIES(0)[0])
          const during = await canary(server.url, firstSearch)
          const first = await firstSearch
          const built = memory(server.child.pid)
          const canaryNote = `another request (session::get of one session, every ${CANARY_EVERY_MS} ms) while the first search ran: ${during.length} answered, p50 ${percentile(during, 50).toFixed(1)} ms, p99 ${percentile(during, 99).toFixed(1)} ms, max ${Math.max(...during).toFixed(1)} ms`
          ctx.log(
            `${subject}: first search (index built) ${first.ms.toFixed(0)} ms, RSS ${started.rss.toFixed(0)} MiB before it, ${built.rss.toFixed(0)} MiB after it; ${canaryNote}`,
          )
          const lat: number[] = []
          let incomplete = 0
          let hits = 0
          for (let i = 0; i < ROUNDS; i++) {
            const qs = QUERIES(i)
            const r = await search(server.url, qs[i % qs.length])
            lat.push(r.ms)
            hits += r.hits
            if (r.incomplete) incomplete++
          }
          const after = memory(server.child.pid)
          await stop(server)
          const busy = loadavg()[0].toFixed(1)
          const p95 = percentile(lat, 95)
          ctx.log(
            `${subject}: p50 ${percentile(lat, 50).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms over ${lat.length} searches (${incomplete} incomplete, ${hits} hits); RSS ${after.rss.toFixed(0)} MiB; load ${busy}`,
          )
          const note = `${ENTRIES.toLocaleString('en-US')} entries in ${Math.ceil(ENTRIES / PER_SESSION).toLocaleString('en-US')} sessions (S5's data, ${bulk ? (storage === 'file' ? 'bulk-loaded into the data directory' : 'bulk-loaded into the schema') : 'pushed through the API'} in ${(loadMs / 1000).toFixed(0)} s); ${lat.length} searches over HTTP one after the other (6 shapes: a rare term, rare + common, 3 terms in one session, a phrase, a prefix, a term in every message), p50 ${percentile(lat, 50).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms, ${incomplete} answers incomplete (the work budget); server RSS ${after.rss.toFixed(0)} MiB; 1-min load average ${busy}`
          const base = storage === 'postgres' ? { baseline: 'file storage' } : {}
          rows.push(
            {
              id: 'S7',
              subject,
              metric: 'session::search p95',
              value: p95,
              unit: 'ms',
              better: 'lower',
              ...base,
              note,
            },
            {
              id: 'S7',
              subject,
              metric: 'first search (builds the index)',
              value: first.ms,
              unit: 'ms',
              better: 'lower',
              ...base,
              note: `${storage === 'postgres' ? "the database's full text (terms written by each commit): no index is built in the server" : 'every message read and tokenized'}; server RSS ${started.rss.toFixed(0)} MiB before it, ${built.rss.toFixed(0)} MiB after it; ${canaryNote}`,
            },
            {
              id: 'S7',
              subject,
              metric: 'canary p99 during the first search',
              value: percentile(during, 99),
              unit: 'ms',
              better: 'lower',
              ...base,
              note: canaryNote,
            },
          )
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    } finally {
      await cluster.stop()
    }
    return rows
  },
}

export default s7
