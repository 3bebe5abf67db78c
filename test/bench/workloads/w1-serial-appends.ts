import type { Workload } from '../types.js'
import { chain, messages } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry } from '../subjects/dexie.js'
import { now } from '../subjects/measure.js'
import { openRaw, putEntries } from '../subjects/raw-idb.js'
import { compareRows, runRounds } from '../subjects/rows.js'
import { openRx, rxEntry } from '../subjects/rxdb.js'

const N = 10_000
/** Untimed writes first, so the timed ones do not pay for JIT warm-up and the first commit. */
const WARMUP = 200

/**
 * W1: 10,000 appends, each awaited before the next is issued (a chat UI adding messages one by
 * one). Every write is its own transaction for every subject; the raw baseline is one put per
 * transaction. Colloquy's transaction also reads and rewrites the session head (leaf, counts).
 */
const w1: Workload = {
  id: 'W1',
  title: '10,000 appends awaited one after another',
  env: 'browser',
  async run(ctx) {
    const msgs = messages(N + WARMUP)
    const entries = chain(N + WARMUP)
    const outcomes = await runRounds(ctx, 1, {
      async 'raw idb'() {
        const db = await openRaw(ctx.dbName('w1-raw'))
        for (const e of entries.slice(N)) await putEntries(db, 'warm', [e])
        const t0 = now()
        for (let i = 0; i < N; i++) await putEntries(db, 's1', [entries[i]!])
        const ms = now() - t0
        db.close()
        return ms
      },
      async colloquy() {
        const store = await openColloquy(ctx.dbName('w1-colloquy'))
        const warm = await store.create({})
        for (const m of msgs.slice(N)) await store.append({ session_id: warm.session_id, message: m })
        const { session_id } = await store.create({})
        const t0 = now()
        for (let i = 0; i < N; i++) await store.append({ session_id, message: msgs[i]! })
        const ms = now() - t0
        await store.close()
        return ms
      },
      async dexie() {
        const db = new BenchDexie(ctx.dbName('w1-dexie'))
        for (const e of entries.slice(N)) await db.entries.add(dexieEntry('warm', e))
        const recs = entries.slice(0, N).map((e) => dexieEntry('s1', e))
        const t0 = now()
        for (const r of recs) await db.entries.add(r)
        const ms = now() - t0
        db.close()
        return ms
      },
      async rxdb() {
        const rx = await openRx(ctx.dbName('w1-rxdb'))
        try {
          for (const e of entries.slice(N)) await rx.entries.insert(rxEntry('warm', e))
          const docs = entries.slice(0, N).map((e) => rxEntry('s1', e))
          const t0 = now()
          for (const d of docs) await rx.entries.insert(d)
          return now() - t0
        } finally {
          await rx.db.close()
        }
      },
    }, { drop: true })
    return compareRows(outcomes, {
      id: 'W1', metric: '10k serial appends', unit: 'ms', better: 'lower', ahead: true,
      vsRaw: { max: 1.3, text: '<= 1.3x raw idb' },
      notes: { 'raw idb': 'one put per transaction', colloquy: 'store.append, awaited', dexie: 'table.add, awaited', rxdb: 'collection.insert, awaited' },
    })
  },
}

export default w1
