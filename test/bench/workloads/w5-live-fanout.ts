import { liveQuery } from 'dexie'
import type { SessionEntry } from '@colloquy/core'
import type { Workload } from '../types.js'
import { chain, entryId, messages, meta } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry, dexieSession } from '../subjects/dexie.js'
import { median, now, percentile, sleep, watch } from '../subjects/measure.js'
import { openRaw, putEntries } from '../subjects/raw-idb.js'
import { compareRows, runRounds, type Subject } from '../subjects/rows.js'
import { openRx, rxEntry, rxSession } from '../subjects/rxdb.js'

const SESSIONS = 100
const PER_SESSION = 20
const REPEATS = 20

/** Session k of the setup, and the k-th appended entry's session (spread over all sessions). */
const sid = (k: number): string => `s_${String(k).padStart(3, '0')}`
const targetOf = (i: number): number => (i * 37) % SESSIONS

/**
 * W5: 100 sessions of 20 messages, each watched by a live query (Colloquy `messages$`, Dexie
 * `liveQuery`, RxDB `find().$`); then one append to one session, timed until that session's
 * subscriber emits a result that holds the new message. Repeated 20 times over different
 * sessions; the median is reported. Raw idb has no live query: its row is the bare write.
 */
const w5: Workload = {
  id: 'W5',
  title: 'one append with 100 live messages$ subscribers on 100 sessions',
  env: 'browser',
  async run(ctx) {
    const base = chain(PER_SESSION)
    // Colloquy runs a second series with `optimistic: true` subscribers: twice the messages.
    const extra = messages(PER_SESSION + 2 * REPEATS).slice(PER_SESSION)
    const p95: Partial<Record<Subject, number>> = {}
    let optimistic: { median: number; p95: number } | undefined
    /** Raw idb's put timed to its commit: the floor for a subscriber told after the commit. */
    let rawCommitted: { median: number; p95: number } | undefined

    /** Times `append(i)` until `emitted(i)` resolves, REPEATS times; one value per repeat. */
    const timeRepeats = async (s: Subject, append: (i: number) => Promise<unknown>, emitted: (i: number) => Promise<unknown>, from = 0): Promise<number> => {
      const times: number[] = []
      const durable: number[] = []
      for (let i = from; i < from + REPEATS; i++) {
        const t0 = now()
        const seen = emitted(i)
        const write = append(i)
        await seen
        times.push(now() - t0)
        await write
        durable.push(now() - t0)
        // Let every other subscriber finish reacting before the next append.
        await sleep(20)
      }
      if (s === 'raw idb') rawCommitted = { median: median(durable), p95: percentile(durable, 95) }
      if (from === 0) p95[s] = percentile(times, 95)
      else optimistic = { median: median(times), p95: percentile(times, 95) }
      return median(times)
    }

    /** Each session's last entry id, so appends extend the chain (the active branch). */
    const last = new Map<number, { id: string; count: number }>()
    const nextEntry = (i: number): { k: number; entry: SessionEntry } => {
      const k = targetOf(i)
      const prev = last.get(k) ?? { id: base[PER_SESSION - 1]!.id, count: PER_SESSION }
      const entry: SessionEntry = { id: entryId(PER_SESSION + i), parent_id: prev.id, timestamp: extra[i]!.timestamp, revision: 0, kind: 'message', message: extra[i]! }
      last.set(k, { id: entry.id, count: prev.count + 1 })
      return { k, entry }
    }
    const expected = (i: number): number => {
      const k = targetOf(i)
      let count = PER_SESSION
      for (let j = 0; j <= i; j++) if (targetOf(j) === k) count++
      return count
    }

    const outcomes = await runRounds(ctx, 1, {
      async 'raw idb'() {
        const db = await openRaw(ctx.dbName('w5-raw'))
        for (let k = 0; k < SESSIONS; k++) await putEntries(db, sid(k), base)
        last.clear()
        const ms = await timeRepeats('raw idb', (i) => {
          const { k, entry } = nextEntry(i)
          return putEntries(db, sid(k), [entry])
        }, () => Promise.resolve())
        db.close()
        return ms
      },
      async colloquy() {
        const store = await openColloquy(ctx.dbName('w5-colloquy'))
        for (let k = 0; k < SESSIONS; k++) await store.importSession({ meta: meta(sid(k), PER_SESSION), entries: base, active_leaf: base[PER_SESSION - 1]!.id })
        const watchers = Array.from({ length: SESSIONS }, (_, k) => watch(store.messages$({ session_id: sid(k) })))
        await Promise.all(watchers.map((w) => w.next((items) => items.length === PER_SESSION)))
        last.clear()
        // Colloquy picks the parent (the active leaf) and the id itself.
        const append = (i: number): Promise<unknown> => store.append({ session_id: sid(targetOf(i)), message: extra[i]! })
        try {
          const ms = await timeRepeats('colloquy', append, (i) => watchers[targetOf(i)]!.next((items) => items.length === expected(i)))
          // The opt-in: subscribers shown a write when it is handed to IndexedDB, before it commits.
          for (const w of watchers) w.stop()
          const eager = Array.from({ length: SESSIONS }, (_, k) => watch(store.messages$({ session_id: sid(k), optimistic: true })))
          try {
            await timeRepeats('colloquy', append, (i) => eager[targetOf(i)]!.next((items) => items.length === expected(i)), REPEATS)
          } finally {
            for (const w of eager) w.stop()
          }
          return ms
        } finally {
          for (const w of watchers) w.stop()
          await store.close()
        }
      },
      async dexie() {
        const db = new BenchDexie(ctx.dbName('w5-dexie'))
        await db.entries.bulkAdd(Array.from({ length: SESSIONS }, (_, k) => base.map((e) => dexieEntry(sid(k), e))).flat())
        const watchers = Array.from({ length: SESSIONS }, (_, k) => watch(liveQuery(() => dexieSession(db, sid(k)))))
        await Promise.all(watchers.map((w) => w.next((rows) => rows.length === PER_SESSION)))
        last.clear()
        try {
          return await timeRepeats(
            'dexie',
            (i) => {
              const { k, entry } = nextEntry(i)
              return db.entries.add(dexieEntry(sid(k), entry))
            },
            (i) => watchers[targetOf(i)]!.next((rows) => rows.length === expected(i)),
          )
        } finally {
          for (const w of watchers) w.stop()
          db.close()
        }
      },
      async rxdb() {
        const rx = await openRx(ctx.dbName('w5-rxdb'))
        try {
          await rx.entries.bulkInsert(Array.from({ length: SESSIONS }, (_, k) => base.map((e) => rxEntry(sid(k), e))).flat())
          const watchers = Array.from({ length: SESSIONS }, (_, k) => watch(rxSession(rx, sid(k)).$))
          await Promise.all(watchers.map((w) => w.next((docs) => docs.length === PER_SESSION)))
          last.clear()
          try {
            return await timeRepeats(
              'rxdb',
              (i) => {
                const { k, entry } = nextEntry(i)
                return rx.entries.insert(rxEntry(sid(k), entry))
              },
              (i) => watchers[targetOf(i)]!.next((docs) => docs.length === expected(i)),
            )
          } finally {
            for (const w of watchers) w.stop()
          }
        } finally {
          await rx.db.close()
        }
      },
    }, { drop: true })
    const p95note = (s: Subject): string => (p95[s] === undefined ? '' : `; p95 ${p95[s]!.toFixed(2)} ms`)
    const optimisticRow = optimistic && {
      id: 'W5', subject: 'colloquy optimistic', metric: 'append -> subscriber emits', value: optimistic.median, unit: 'ms', better: 'lower' as const, baseline: 'dexie',
      note: `store.append; 100 messages$({ optimistic: true }) subscribers (an opt-in: emits when the write is handed to IndexedDB, takes it back if the commit fails; events still after the commit); same store, after the default series; ratio vs Dexie (below 1: ahead); median of ${REPEATS}; p95 ${optimistic.p95.toFixed(2)} ms`,
    }
    const committedRow = rawCommitted && {
      id: 'W5', subject: 'raw idb committed', metric: 'append -> subscriber emits', value: rawCommitted.median, unit: 'ms', better: 'lower' as const,
      note: `the raw idb series timed to the transaction's complete event instead of the put call's return: the floor for emitting after the commit; median of ${REPEATS}; p95 ${rawCommitted.p95.toFixed(2)} ms`,
    }
    return [...compareRows(outcomes, {
      id: 'W5', metric: 'append -> subscriber emits', unit: 'ms', better: 'lower', ahead: true,
      notes: {
        'raw idb': `bare put transaction, no live query, timed to the put call's return (not its commit: see raw idb committed), median of ${REPEATS}${p95note('raw idb')}`,
        colloquy: `store.append; 100 messages$ subscribers; emits after the commit; median of ${REPEATS}${p95note('colloquy')}`,
        dexie: `table.add; 100 liveQuery subscribers; Dexie 4 applies a pending write to its cached query results (optimistic updates), so it may emit before the commit; median of ${REPEATS}${p95note('dexie')}`,
        rxdb: `collection.insert; 100 find().$ subscribers; median of ${REPEATS}${p95note('rxdb')}`,
      },
    }), ...(committedRow ? [committedRow] : []), ...(optimisticRow ? [optimisticRow] : [])]
  },
}

export default w5
