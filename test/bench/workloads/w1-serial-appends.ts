import type { Store } from '@colloquy/core'
import type { Workload } from '../types.js'
import { chain, messages } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry } from '../subjects/dexie.js'
import { now } from '../subjects/measure.js'
import { openRaw, openRawStamped, putEntries, putStamped } from '../subjects/raw-idb.js'
import { compareRows, runRounds } from '../subjects/rows.js'
import { openRx, rxEntry, type BenchRx } from '../subjects/rxdb.js'

const N = 10_000
/**
 * The 10,000 appends go in slices, subjects taking turns (the order rotating), so a busy spell
 * or the browser's background compaction hits all alike. Slices of 400 (a fraction of a second
 * each): with slices of 2,000 the ratio to raw idb swung from 1.11 to 1.50 between the rounds
 * of one run, which no change to Colloquy explains.
 */
const ROUNDS = 25
const SLICE = N / ROUNDS
/** Untimed writes first, so the timed ones do not pay for JIT warm-up and the first commits. */
const WARMUP = 200

const sum = (v: number[]): number => v.reduce((a, b) => a + b, 0)

/**
 * W1: 10,000 appends to one session, each awaited before the next is issued (a chat UI adding
 * messages one by one). Every write is its own transaction for every subject; the raw baseline
 * is one put per transaction. Colloquy's transaction puts the entry (stamped with the session's
 * leaf and counts) and reads the session's newest stamp to check no other tab wrote meanwhile.
 * Connections stay open across the slices; the reported value is the total.
 */
const w1: Workload = {
  id: 'W1',
  title: '10,000 appends awaited one after another',
  env: 'browser',
  async run(ctx) {
    const msgs = messages(N + WARMUP)
    const entries = chain(N + WARMUP)
    const warm = entries.slice(N)
    const raw = await openRaw(ctx.dbName('w1-raw'))
    const stamped = await openRawStamped(ctx.dbName('w1-raw-stamped'))
    const store: Store = await openColloquy(ctx.dbName('w1-colloquy'))
    const dexie = new BenchDexie(ctx.dbName('w1-dexie'))
    let rx: BenchRx | undefined
    try {
      for (const e of warm) await putEntries(raw, 'warm', [e])
      for (let i = 0; i < warm.length; i++) await putStamped(stamped, 'warm', [warm[i]!], i + 1)
      const warmSession = await store.create({})
      for (const m of msgs.slice(N)) await store.append({ session_id: warmSession.session_id, message: m })
      const { session_id } = await store.create({})
      for (const e of warm) await dexie.entries.add(dexieEntry('warm', e))
      const dexieRecs = entries.slice(0, N).map((e) => dexieEntry('s1', e))
      const rxDocs = entries.slice(0, N).map((e) => rxEntry('s1', e))
      const slice = (r: number): [number, number] => [r * SLICE, (r + 1) * SLICE]
      const outcomes = await runRounds(ctx, ROUNDS, {
        async 'raw idb'(r) {
          const [from, to] = slice(r)
          const t0 = now()
          for (let i = from; i < to; i++) await putEntries(raw, 's1', [entries[i]!])
          return now() - t0
        },
        async 'raw idb stamped'(r) {
          const [from, to] = slice(r)
          const t0 = now()
          for (let i = from; i < to; i++) await putStamped(stamped, 's1', [entries[i]!], i + 1)
          return now() - t0
        },
        async colloquy(r) {
          const [from, to] = slice(r)
          const t0 = now()
          for (let i = from; i < to; i++) await store.append({ session_id, message: msgs[i]! })
          return now() - t0
        },
        async dexie(r) {
          const [from, to] = slice(r)
          const t0 = now()
          for (let i = from; i < to; i++) await dexie.entries.add(dexieRecs[i]!)
          return now() - t0
        },
        async rxdb(r) {
          if (!rx) {
            rx = await openRx(ctx.dbName('w1-rxdb'))
            for (const e of warm) await rx.entries.insert(rxEntry('warm', e))
          }
          const [from, to] = slice(r)
          const t0 = now()
          for (let i = from; i < to; i++) await rx.entries.insert(rxDocs[i]!)
          return now() - t0
        },
      })
      return compareRows(outcomes, {
        id: 'W1',
        metric: '10k serial appends',
        unit: 'ms',
        better: 'lower',
        ahead: true,
        reduce: sum,
        vsRaw: { max: 1.3, text: '<= 1.3x raw idb' },
        notes: {
          'raw idb': 'one put per transaction',
          'raw idb stamped':
            "the same into a store laid out as Colloquy's (each entry carries the session's new version in an indexed stamp): the floor for Colloquy's layout",
          colloquy: 'store.append, awaited',
          dexie: 'table.add, awaited',
          rxdb: 'collection.insert, awaited',
        },
      })
    } finally {
      raw.close()
      stamped.close()
      await store.close()
      dexie.close()
      await rx?.db.close()
    }
  },
}

export default w1
