import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import type { BenchRow, Workload } from '../types.js'
import { branchedSession } from '../subjects/data.js'
import { median, now } from '../subjects/measure.js'

// A look for issue 26 (not in the suite: `BENCH_WORKLOADS=test/bench/looks node test/bench/run.mjs
// T26`): what an app pays for `tree$` on W4's 10,000-entry session, cold, with encryption on and
// off, subjects alternating round by round; and, on the encrypted store, the two ways its entries
// can be read opened: held sealed then opened in one batch (what `tree$` does now:
// `sealedEntries`, then `openEntries`), or opened as they are read (`entries`: the first part
// opened while the browser reads the rest).

const ROUNDS = 3
const COLD = 10_000
const BRANCHES = 20
const SID = 's_tree'
const passphrase = 'bench passphrase'

type Subject = 'clear' | 'encrypted'

const open = (name: string, s: Subject): Promise<Store> =>
  createStore({
    storage: indexedDbStorage({ name }),
    multiTab: false,
    ...(s === 'encrypted' && { encryption: { passphrase } }),
  })

/** From subscribing `tree$` to its first value holding every entry. */
async function treeFirst(store: Store): Promise<number> {
  const t = now()
  await new Promise<void>((resolve, reject) => {
    const sub = store.tree$(SID).subscribe({
      next: (tree) => {
        if (tree && tree.entries.size >= COLD) {
          resolve()
          queueMicrotask(() => sub.unsubscribe())
        }
      },
      error: reject,
    })
  })
  return now() - t
}

const t26: Workload = {
  id: 'T26',
  title: 'tree$ of a 10,000-entry session, cold: encryption on vs off',
  env: 'browser',
  async run(ctx) {
    const times = new Map<string, number[]>()
    const add = (k: string, ms: number) => void times.set(k, [...(times.get(k) ?? []), ms])
    for (let r = 0; r < ROUNDS; r++) {
      const subjects: Subject[] = r % 2 ? ['encrypted', 'clear'] : ['clear', 'encrypted']
      for (const s of subjects) {
        const name = ctx.dbName(`t26-${s}-${r}`)
        const w = await open(name, s)
        await w.importSession(branchedSession(SID, COLD, BRANCHES))
        await w.close()
        let cold = await open(name, s)
        add(`tree$ first value\u0000${s}`, await treeFirst(cold))
        await cold.close()
        if (s === 'encrypted') {
          // The two reads, each by a store opened cold (the storage wrapper's own calls).
          cold = await open(name, s)
          await cold.get({ session_id: SID })
          const st = cold.storage
          let t = now()
          const held = await st.sealedEntries!(SID, COLD)
          const opened = await st.openEntries!(SID, held)
          add(`sealedEntries then openEntries\u0000${s}`, now() - t)
          if (opened.length !== COLD) throw new Error(`opened ${opened.length}`)
          await cold.close()
          cold = await open(name, s)
          await cold.get({ session_id: SID })
          t = now()
          const read = await cold.storage.entries(SID, COLD)
          add(`entries (opened as read)\u0000${s}`, now() - t)
          if (read.length !== COLD) throw new Error(`read ${read.length}`)
          await cold.close()
        } else {
          cold = await open(name, s)
          await cold.get({ session_id: SID })
          const t = now()
          const read = await cold.storage.entries(SID, COLD)
          add(`entries (opened as read)\u0000${s}`, now() - t)
          if (read.length !== COLD) throw new Error(`read ${read.length}`)
          await cold.close()
        }
        await new Promise<void>((resolve) => {
          const d = indexedDB.deleteDatabase(name)
          d.onsuccess = d.onerror = d.onblocked = () => resolve()
        })
      }
    }
    const rows: BenchRow[] = []
    for (const [k, v] of times) {
      const [metric, s] = k.split('\u0000') as [string, Subject]
      rows.push({
        id: 'T26',
        subject: `colloquy ${s}`,
        metric,
        value: median(v),
        unit: 'ms',
        better: 'lower',
        note: `W4's session (${BRANCHES} branches) imported, store opened again; median of ${ROUNDS} rounds (${v.map((x) => x.toFixed(0)).join(', ')})`,
      })
    }
    return rows
  },
}

export default t26
