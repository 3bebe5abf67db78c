import { liveQuery } from 'dexie'
import type { Workload } from '../types.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieSession } from '../subjects/dexie.js'
import { firstValue, now } from '../subjects/measure.js'
import { getSession, openRaw } from '../subjects/raw-idb.js'
import { compareRows, runRounds, type Subject } from '../subjects/rows.js'
import { inFreshRealm } from '../subjects/realm.js'
import { openRx, rxSession } from '../subjects/rxdb.js'
import { seedAll } from '../subjects/seed-all.js'

const N = 10_000
const BRANCHES = 20
const ROUNDS = 7
const SID = 's_cold'

const expect = (what: string, got: number, want: number): void => {
  if (got !== want) throw new Error(`${what}: got ${got} records, expected ${want}`)
}

/**
 * One cold open: from opening `subject`'s database to its first result, in ms (and Colloquy's
 * active path length). Called in a fresh realm, so no library starts with anything in memory.
 */
export async function coldOpen(subject: Subject, name: string): Promise<{ ms: number; path?: number }> {
  const t0 = now()
  switch (subject) {
    case 'raw idb': {
      const db = await openRaw(name)
      const entries = await getSession(db, SID)
      const ms = now() - t0
      db.close()
      expect('raw idb', entries.length, N)
      return { ms }
    }
    case 'colloquy': {
      const store = await openColloquy(name)
      const items = await firstValue(store.messages$({ session_id: SID }))
      const ms = now() - t0
      await store.close()
      if (items.length === 0) throw new Error('messages$ emitted an empty path')
      return { ms, path: items.length }
    }
    case 'dexie': {
      const db = new BenchDexie(name)
      const entries = await firstValue(liveQuery(() => dexieSession(db, SID)))
      const ms = now() - t0
      db.close()
      expect('dexie', entries.length, N)
      return { ms }
    }
    case 'rxdb': {
      const rx = await openRx(name)
      try {
        const docs = await firstValue(rxSession(rx, SID).$)
        const ms = now() - t0
        expect('rxdb', docs.length, N)
        return { ms }
      } finally {
        await rx.db.close()
      }
    }
  }
}

/**
 * W4: cold open of a 10,000-entry session with 20 branches. Each subject's data is written
 * beforehand with its bulk API and every connection closed; then each round times, in a fresh
 * realm (a new iframe: as after a reload, no library keeps anything in memory), from opening
 * the database to the first result: Colloquy's first `messages$` emission (the active path,
 * computed from all entries), raw `openDB` + `getAll` of the session's key range, Dexie's first
 * `liveQuery` result, RxDB's first `find().$` result.
 */
const w4: Workload = {
  id: 'W4',
  title: 'cold open of a 10,000-entry / 20-branch session to the first live result',
  env: 'browser',
  async run(ctx) {
    const names: Record<Subject, string> = {
      'raw idb': ctx.dbName('w4-raw'),
      colloquy: ctx.dbName('w4-colloquy'),
      dexie: ctx.dbName('w4-dexie'),
      rxdb: ctx.dbName('w4-rxdb'),
    }
    await seedAll(names, SID, N, BRANCHES)
    let pathLength = 0
    const open = (s: Subject) => async (): Promise<number> => {
      const { ms, path } = await inFreshRealm<{ ms: number; path?: number }>(
        import.meta.url,
        'coldOpen',
        s,
        names[s],
      )
      if (path) pathLength = path
      return ms
    }
    const outcomes = await runRounds(ctx, ROUNDS, {
      'raw idb': open('raw idb'),
      colloquy: open('colloquy'),
      dexie: open('dexie'),
      rxdb: open('rxdb'),
    })
    return compareRows(outcomes, {
      id: 'W4',
      metric: 'cold open to first result',
      unit: 'ms',
      better: 'lower',
      ahead: true,
      vsRaw: { max: 1.5, text: '<= 1.5x raw idb' },
      notes: {
        'raw idb': 'openDB + getAll(key range)',
        colloquy: `createStore + messages$ first emission (${pathLength} messages on the active path)`,
        dexie: 'new Dexie + liveQuery first result',
        rxdb: 'createRxDatabase + addCollections + find().$ first result',
      },
    })
  },
}

export default w4
