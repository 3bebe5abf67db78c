import type { Workload } from '../types.js'
import { chain, messages } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry } from '../subjects/dexie.js'
import { now } from '../subjects/measure.js'
import { openRaw, openRawStamped, putEntries, putStamped } from '../subjects/raw-idb.js'
import { compareRows, runRounds } from '../subjects/rows.js'
import { openRx, rxEntry } from '../subjects/rxdb.js'

const N = 10_000
const ROUNDS = 5

/**
 * W2: 10,000 appends issued at once (an import, a paste, a sync burst), timed until all are
 * durable, as throughput. Colloquy gets 10,000 separate `append` calls (its group commit has to
 * find the batch); raw idb writes them in one transaction, Dexie with `bulkAdd`, RxDB with
 * `bulkInsert`, their best bulk paths. Every round writes into a fresh database.
 */
const w2: Workload = {
  id: 'W2',
  title: '10,000 appends issued at once',
  env: 'browser',
  async run(ctx) {
    const msgs = messages(N)
    const entries = chain(N)
    const rate = (ms: number): number => (N / ms) * 1000
    const txs: number[] = []
    const outcomes = await runRounds(ctx, ROUNDS, {
      async 'raw idb'(r) {
        const db = await openRaw(ctx.dbName(`w2-raw-${r}`))
        const t0 = now()
        await putEntries(db, 's1', entries)
        const ms = now() - t0
        db.close()
        return rate(ms)
      },
      async 'raw idb stamped'(r) {
        const db = await openRawStamped(ctx.dbName(`w2-raw-stamped-${r}`))
        const t0 = now()
        await putStamped(db, 's1', entries, N)
        const ms = now() - t0
        db.close()
        return rate(ms)
      },
      async colloquy(r) {
        const store = await openColloquy(ctx.dbName(`w2-colloquy-${r}`))
        const { session_id } = await store.create({})
        const tx0 = store.engine.transactions
        const t0 = now()
        await Promise.all(msgs.map((message) => store.append({ session_id, message })))
        const ms = now() - t0
        txs.push(store.engine.transactions - tx0)
        await store.close()
        return rate(ms)
      },
      async dexie(r) {
        const db = new BenchDexie(ctx.dbName(`w2-dexie-${r}`))
        await db.open()
        const recs = entries.map((e) => dexieEntry('s1', e))
        const t0 = now()
        await db.entries.bulkAdd(recs)
        const ms = now() - t0
        db.close()
        return rate(ms)
      },
      async rxdb(r) {
        const rx = await openRx(ctx.dbName(`w2-rxdb-${r}`))
        try {
          const docs = entries.map((e) => rxEntry('s1', e))
          const t0 = now()
          const res = await rx.entries.bulkInsert(docs)
          const ms = now() - t0
          if (res.error.length) throw new Error(`bulkInsert: ${res.error.length} errors`)
          return rate(ms)
        } finally {
          await rx.db.close()
        }
      },
    }, { drop: true })
    return compareRows(outcomes, {
      id: 'W2', metric: '10k appends at once', unit: 'appends/s', better: 'higher', ahead: true,
      vsRaw: { min: 0.9, text: '>= 0.9x raw idb' },
      notes: {
        'raw idb': 'one transaction, 10k puts',
        'raw idb stamped': "the same into a store laid out as Colloquy's (indexed stamps; the newest entry carries the session's version): what that layout costs: Chromium deserializes a copy of every value put into an indexed store to find its index keys",
        colloquy: `10k store.append in one tick; transactions per round: ${txs.join(', ')}`,
        dexie: 'bulkAdd', rxdb: 'bulkInsert',
      },
    })
  },
}

export default w2
