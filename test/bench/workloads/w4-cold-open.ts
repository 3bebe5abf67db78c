import { liveQuery } from 'dexie'
import type { Workload } from '../types.js'
import { branchedSession } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry, dexieSession } from '../subjects/dexie.js'
import { firstValue, now } from '../subjects/measure.js'
import { getSession, openRaw, putEntries } from '../subjects/raw-idb.js'
import { compareRows, runRounds } from '../subjects/rows.js'
import { openRx, rxEntry, rxSession } from '../subjects/rxdb.js'

const N = 10_000
const BRANCHES = 20
const ROUNDS = 5
const SID = 's_cold'

const expect = (what: string, got: number, want: number): void => {
  if (got !== want) throw new Error(`${what}: got ${got} records, expected ${want}`)
}

/**
 * W4: cold open of a 10,000-entry session with 20 branches. Each subject's data is written
 * beforehand with its bulk API and every connection closed; then each round times from opening
 * the database to the first result: Colloquy's first `messages$` emission (the active path,
 * computed from all entries), raw `openDB` + `getAll` of the session's key range, Dexie's first
 * `liveQuery` result, RxDB's first `find().$` result. Same page, so the browser's own caches are
 * warm for everyone alike; no JavaScript object survives from the write.
 */
const w4: Workload = {
  id: 'W4',
  title: 'cold open of a 10,000-entry / 20-branch session to the first live result',
  env: 'browser',
  async run(ctx) {
    const names = { raw: ctx.dbName('w4-raw'), colloquy: ctx.dbName('w4-colloquy'), dexie: ctx.dbName('w4-dexie'), rxdb: ctx.dbName('w4-rxdb') }
    let pathLength = 0
    {
      const session = branchedSession(SID, N, BRANCHES)
      const raw = await openRaw(names.raw)
      await putEntries(raw, SID, session.entries)
      raw.close()
      const store = await openColloquy(names.colloquy)
      await store.importSession(session)
      await store.close()
      const dexie = new BenchDexie(names.dexie)
      await dexie.entries.bulkAdd(session.entries.map((e) => dexieEntry(SID, e)))
      dexie.close()
      const rx = await openRx(names.rxdb)
      try {
        await rx.entries.bulkInsert(session.entries.map((e) => rxEntry(SID, e)))
      } finally {
        await rx.db.close()
      }
    }
    const outcomes = await runRounds(ctx, ROUNDS, {
      async 'raw idb'() {
        const t0 = now()
        const db = await openRaw(names.raw)
        const entries = await getSession(db, SID)
        const ms = now() - t0
        db.close()
        expect('raw idb', entries.length, N)
        return ms
      },
      async colloquy() {
        const t0 = now()
        const store = await openColloquy(names.colloquy)
        const items = await firstValue(store.messages$({ session_id: SID }))
        const ms = now() - t0
        await store.close()
        if (items.length === 0) throw new Error('messages$ emitted an empty path')
        pathLength = items.length
        return ms
      },
      async dexie() {
        const t0 = now()
        const db = new BenchDexie(names.dexie)
        const entries = await firstValue(liveQuery(() => dexieSession(db, SID)))
        const ms = now() - t0
        db.close()
        expect('dexie', entries.length, N)
        return ms
      },
      async rxdb() {
        const t0 = now()
        const rx = await openRx(names.rxdb)
        try {
          const docs = await firstValue(rxSession(rx, SID).$)
          const ms = now() - t0
          expect('rxdb', docs.length, N)
          return ms
        } finally {
          await rx.db.close()
        }
      },
    })
    return compareRows(outcomes, {
      id: 'W4', metric: 'cold open to first result', unit: 'ms', better: 'lower', ahead: true,
      vsRaw: { max: 1.5, text: '<= 1.5x raw idb' },
      notes: {
        'raw idb': 'openDB + getAll(key range)',
        colloquy: `createStore + messages$ first emission (${pathLength} messages on the active path)`,
        dexie: 'new Dexie + liveQuery first result', rxdb: 'createRxDatabase + addCollections + find().$ first result',
      },
    })
  },
}

export default w4
