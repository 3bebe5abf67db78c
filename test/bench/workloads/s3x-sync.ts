import type { ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import { startPostgres, type TestCluster } from '../../support/postgres.js'
import { call, quantile, syncPages } from '../subjects/sync-pages.js'
import type { BenchRow, Workload } from '../types.js'
import { GAP_MS, streamLatency, TOKEN, UPDATES } from './s1-s3-sync.js'
import { repoRoot, spawnServer } from './s4-server.js'

const APPENDS = 200

/**
 * S3 across instances with real devices: two headless Chromium pages (`@colloquy/sync` over real
 * IndexedDB, as in S1–S3), device A synced to instance 1, device B to instance 2 of
 * `colloquy-server` on one PostgreSQL database (a throwaway cluster). (a) A appends `APPENDS`
 * messages `GAP_MS` apart, one chain: from A's `append` to B's live query of that message
 * (`entry$`) holding it. (b) S3's
 * own measure (streamed updates of one message) across the two instances.
 */
const s3xSync: Workload = {
  id: 'S3x-sync',
  title: 'device to device across two server instances on PostgreSQL (browser sync clients)',
  env: 'node',
  async run(ctx) {
    const root = repoRoot()
    let cluster: TestCluster | undefined
    const servers: ChildProcess[] = []
    let pages: Awaited<ReturnType<typeof syncPages>> | undefined
    try {
      cluster = await startPostgres({ durable: true })
      const db = await cluster.createDatabase()
      const urls: string[] = []
      for (let i = 0; i < 2; i++) {
        const s = await spawnServer(
          root,
          'S3x-sync',
          ['--postgres', db, '--token', `bench=${TOKEN}`, '--origin', '*'],
          30_000,
        )
        servers.push(s.child)
        urls.push(s.url)
      }
      pages = await syncPages()
      const a = await pages.page()
      const b = await pages.page()
      await call(a, 'open', urls[0], TOKEN)
      await call(b, 'open', urls[1], TOKEN)
      const session_id = await call<string>(a, 'createSession')
      await call(b, 'flush')
      const ids = Array.from({ length: APPENDS }, (_, i) => `x${i}`)
      await call(b, 'watchEntries', session_id, ids)
      const sent = await call<Array<[string, number]>>(a, 'appendEach', session_id, ids, GAP_MS)
      const until = Date.now() + 10_000
      let seen = new Map<string, number>()
      while (Date.now() < until) {
        seen = new Map(await call<Array<[string, number]>>(b, 'appearances'))
        if (sent.every(([id]) => seen.has(id))) break
        await new Promise((r) => setTimeout(r, 100))
      }
      const latencies = sent
        .filter(([id]) => seen.has(id))
        .map(([id, at]) => seen.get(id)! - at)
        .sort((x, y) => x - y)
      if (latencies.length !== APPENDS)
        throw new Error(`S3x-sync: ${APPENDS - latencies.length} appends never reached device B`)
      const load1 = loadavg()[0].toFixed(1)
      ctx.log(
        `S3x-sync appends: p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p95 ${quantile(latencies, 0.95).toFixed(1)} ms, load ${load1}`,
      )
      const updates = await streamLatency(await pages.page(), await pages.page(), urls[0], urls[1])
      const load2 = loadavg()[0].toFixed(1)
      ctx.log(
        `S3x-sync updates: p50 ${updates.p50.toFixed(1)} ms, p95 ${updates.p95.toFixed(1)} ms (${updates.seen} revisions seen on B), load ${load2}`,
      )
      const subject = 'colloquy sync, A on instance 1 → B on instance 2 (PostgreSQL)'
      const p95 = quantile(latencies, 0.95)
      return [
        {
          id: 'S3x-sync',
          subject,
          metric: 'append latency p50',
          value: quantile(latencies, 0.5),
          unit: 'ms',
          better: 'lower',
          note: `${APPENDS} appends ${GAP_MS} ms apart, from A's append to B's entry$ holding it`,
        },
        {
          id: 'S3x-sync',
          subject,
          metric: 'append latency p95',
          value: p95,
          unit: 'ms',
          better: 'lower',
          target: '<= 50 ms',
          pass: p95 <= 50,
          note: `1-min load average ${load1}`,
        },
        {
          id: 'S3x-sync',
          subject,
          metric: 'update latency p50',
          value: updates.p50,
          unit: 'ms',
          better: 'lower',
          note: `S3's measure across instances: ${UPDATES} updates ${GAP_MS} ms apart; B saw ${updates.seen} distinct revisions`,
        },
        {
          id: 'S3x-sync',
          subject,
          metric: 'update latency p95',
          value: updates.p95,
          unit: 'ms',
          better: 'lower',
          target: '<= 50 ms',
          pass: updates.p95 <= 50,
          note: `1-min load average ${load2}`,
        },
      ] satisfies BenchRow[]
    } finally {
      await pages?.close()
      for (const s of servers) s.kill('SIGKILL')
      cluster?.stop()
    }
  },
}

export default s3xSync
