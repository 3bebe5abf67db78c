import { liveQuery } from 'dexie'
import type { Workload } from '../types.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieSession } from '../subjects/dexie.js'
import { heapUsed, watch } from '../subjects/measure.js'
import { getSession, openRaw } from '../subjects/raw-idb.js'
import { inFreshRealm } from '../subjects/realm.js'
import { compareRows, runRounds, type Subject } from '../subjects/rows.js'
import { openRx, rxSession } from '../subjects/rxdb.js'
import { seedAll } from '../subjects/seed-all.js'

const N = 10_000
const SID = 's_heap'
const MB = 1024 * 1024
const ROUNDS = 3

/** Heap growth from `load()` (connection already open), measured while its result is held. */
async function heldBy(load: () => Promise<unknown>): Promise<number> {
  const before = await heapUsed()
  const held = await load()
  const after = await heapUsed()
  void held
  return (after - before) / MB
}

/**
 * MB of heap that loading the session adds for `subject`, its connection opened first. Called
 * in a fresh realm, so no library cache from an earlier round is already in the heap.
 */
export async function heapOf(subject: Subject, name: string): Promise<number> {
  switch (subject) {
    case 'raw idb': {
      const db = await openRaw(name)
      let entries: unknown[] = []
      const mb = await heldBy(async () => (entries = await getSession(db, SID)))
      db.close()
      if (entries.length !== N) throw new Error(`raw idb loaded ${entries.length} entries`)
      return mb
    }
    case 'colloquy': {
      const store = await openColloquy(name)
      let live: ReturnType<typeof watch> | undefined
      const mb = await heldBy(async () => {
        live = watch(store.messages$({ session_id: SID }))
        return live.next((items) => (items as unknown[]).length > 0)
      })
      live!.stop()
      await store.close()
      return mb
    }
    case 'dexie': {
      const db = new BenchDexie(name)
      await db.open()
      let live: ReturnType<typeof watch> | undefined
      const mb = await heldBy(async () => {
        live = watch(liveQuery(() => dexieSession(db, SID)))
        return live.next((rows) => (rows as unknown[]).length === N)
      })
      live!.stop()
      db.close()
      return mb
    }
    case 'rxdb': {
      const rx = await openRx(name)
      try {
        let live: ReturnType<typeof watch> | undefined
        const mb = await heldBy(async () => {
          live = watch(rxSession(rx, SID).$)
          return live.next((docs) => (docs as unknown[]).length === N)
        })
        live!.stop()
        return mb
      } finally {
        await rx.db.close()
      }
    }
  }
}

/**
 * W6: JS heap held by a loaded 10,000-entry session (the W4 session). For each subject, in a
 * fresh realm, the connection is opened first, the heap measured after full GCs, the session
 * loaded the way a live UI holds it, and the heap measured again while the result is still
 * referenced: Colloquy's store with `messages$` subscribed, the raw `getAll` array, Dexie's
 * `liveQuery` result (subscribed, so its query cache counts too), RxDB's `find().$` documents
 * (subscribed).
 */
const w6: Workload = {
  id: 'W6',
  title: 'heap used by a loaded 10,000-entry session',
  env: 'browser',
  async run(ctx) {
    const names: Record<Subject, string> = {
      'raw idb': ctx.dbName('w6-raw'),
      colloquy: ctx.dbName('w6-colloquy'),
      dexie: ctx.dbName('w6-dexie'),
      rxdb: ctx.dbName('w6-rxdb'),
    }
    // seedAll keeps nothing of the generated data referenced once it returns.
    await seedAll(names, SID, N, 20)
    const measure = (s: Subject) => () => inFreshRealm<number>(import.meta.url, 'heapOf', s, names[s])
    const outcomes = await runRounds(ctx, ROUNDS, {
      'raw idb': measure('raw idb'),
      colloquy: measure('colloquy'),
      dexie: measure('dexie'),
      rxdb: measure('rxdb'),
    })
    return compareRows(outcomes, {
      id: 'W6',
      metric: 'heap of a loaded 10k session',
      unit: 'MB',
      better: 'lower',
      notes: {
        'raw idb': 'getAll array',
        colloquy: 'store entries + messages$ subscribed (active path)',
        dexie: 'liveQuery subscribed (result + its cache)',
        rxdb: 'find().$ subscribed (RxDocuments + caches)',
      },
    })
  },
}

export default w6
