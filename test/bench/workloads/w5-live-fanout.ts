import { liveQuery } from 'dexie'
import type { SessionEntry } from '@colloquy/core'
import type { Workload } from '../types.js'
import { chain, entryId, messages, meta } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry, dexieSession } from '../subjects/dexie.js'
import { median, now, percentile, sleep, watch } from '../subjects/measure.js'
import { openRaw, openRawStamped, putEntries, putStamped } from '../subjects/raw-idb.js'
import { compareRows, runRounds } from '../subjects/rows.js'
import { openRx, rxEntry, rxSession } from '../subjects/rxdb.js'

const SESSIONS = 100
const PER_SESSION = 20
const REPEATS = 20
// Commit times are bimodal (most at about 0.5 ms, a tail past 2 ms): one series of 20 left the
// medians swinging by 0.3 ms between runs. Three rounds, subjects interleaved, each round's
// median reported.
const ROUNDS = 3

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
    /** Every sample of a series over all rounds (p95 in the notes), and each round's median. */
    const series = new Map<string, { all: number[]; rounds: number[] }>()
    const keep = (name: string, values: number[]): number => {
      const sr = series.get(name) ?? { all: [], rounds: [] }
      series.set(name, sr)
      sr.all.push(...values)
      sr.rounds.push(median(values))
      return median(values)
    }

    /**
     * Times `append(i)` until `emitted(i)` resolves, REPEATS times, under series `name`; returns
     * the median. `committed` also keeps the times to the write's settling under its own name.
     */
    const timeRepeats = async (name: string, append: (i: number) => Promise<unknown>, emitted: (i: number) => Promise<unknown>, from = 0, committed?: string): Promise<number> => {
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
      if (committed) keep(committed, durable)
      return keep(name, times)
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

    const outcomes = await runRounds(ctx, ROUNDS, {
      async 'raw idb'() {
        const db = await openRaw(ctx.dbName('w5-raw'))
        for (let k = 0; k < SESSIONS; k++) await putEntries(db, sid(k), base)
        last.clear()
        const ms = await timeRepeats('raw idb', (i) => {
          const { k, entry } = nextEntry(i)
          return putEntries(db, sid(k), [entry])
        }, () => Promise.resolve(), 0, 'raw idb committed')
        db.close()
        // The same appends again, each entry carrying its session's new version in an indexed
        // stamp, as Colloquy writes it (one put; the index makes the commit slower).
        const stamped = await openRawStamped(ctx.dbName('w5-raw-stamped'))
        try {
          for (let k = 0; k < SESSIONS; k++) await putStamped(stamped, sid(k), base, PER_SESSION)
          last.clear()
          await timeRepeats('raw idb stamped', (i) => {
            const { k, entry } = nextEntry(i)
            return putStamped(stamped, sid(k), [entry], last.get(k)!.count)
          }, () => Promise.resolve(), REPEATS, 'raw idb committed, stamped')
        } finally {
          stamped.close()
        }
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
            await timeRepeats('colloquy optimistic', append, (i) => eager[targetOf(i)]!.next((items) => items.length === expected(i)), REPEATS)
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
    const p95note = (name: string): string => {
      const all = series.get(name)?.all
      return all?.length ? `; p95 ${percentile(all, 95).toFixed(2)} ms of ${all.length}` : ''
    }
    /** An extra series as its own row: the median of its rounds' medians, the rounds listed. */
    const seriesRow = (name: string, note: string, baseline?: string) => {
      const sr = series.get(name)
      if (!sr) return []
      return [{
        id: 'W5', subject: name, metric: 'append -> subscriber emits', value: median(sr.rounds), unit: 'ms', better: 'lower' as const, ...(baseline ? { baseline } : {}),
        note: `${note}; median of ${sr.rounds.length} rounds: ${sr.rounds.map((v) => +v.toPrecision(3)).join(', ')}${p95note(name)}`,
      }]
    }
    const clock = crossOriginIsolated ? 'clock 5 µs (cross-origin isolated)' : 'clock 100 µs'
    return [
      ...compareRows(outcomes, {
        id: 'W5', metric: 'append -> subscriber emits', unit: 'ms', better: 'lower', ahead: true,
        notes: {
          'raw idb': `bare put transaction, no live query, timed to the put call's return (not its commit: see raw idb committed); each round the median of ${REPEATS}${p95note('raw idb')}`,
          colloquy: `store.append; 100 messages$ subscribers; emits after the commit; each round the median of ${REPEATS}${p95note('colloquy')}; ${clock}`,
          dexie: `table.add; 100 liveQuery subscribers; Dexie 4 applies a pending write to its cached query results (optimistic updates), so it may emit before the commit; each round the median of ${REPEATS}${p95note('dexie')}`,
          rxdb: `collection.insert; 100 find().$ subscribers; each round the median of ${REPEATS}${p95note('rxdb')}`,
        },
      }),
      ...seriesRow('raw idb committed', `the raw idb series timed to the transaction's complete event instead of the put call's return: the floor for emitting after the commit`),
      ...seriesRow('raw idb committed, stamped', `raw idb committed with Colloquy's record layout: each put entry carries its session's new version in a store indexed on it (how Colloquy finds a session's head without a second record per commit): the floor for Colloquy emitting after the commit`),
      ...seriesRow('colloquy optimistic', `store.append; 100 messages$({ optimistic: true }) subscribers (an opt-in: emits when the write is handed to IndexedDB, takes it back if the commit fails; events still after the commit); same store, after the default series; ratio vs Dexie (below 1: ahead)`, 'dexie'),
    ]
  },
}

export default w5
