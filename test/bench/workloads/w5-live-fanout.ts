import { liveQuery } from 'dexie'
import type { SessionEntry } from '@colloquy/core'
import type { Workload } from '../types.js'
import { chain, entryId, messages, meta, rng } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry, dexieSession } from '../subjects/dexie.js'
import { median, now, percentile, sleep, watch, type Subscribable } from '../subjects/measure.js'
import { openRaw, openRawStamped, putEntries, putStamped } from '../subjects/raw-idb.js'
import { dropDatabases } from '../subjects/databases.js'
import { compareRows, failure, SUBJECTS, type Measured, type Outcome } from '../subjects/rows.js'
import { openRx, rxEntry, rxSession } from '../subjects/rxdb.js'

const SESSIONS = 100
const PER_SESSION = 20
const REPEATS = 20
// Commit times are bimodal (most under 1.2 ms, a third or more at 2-7 ms, raw IndexedDB's as
// much as anyone's) and drift with the browser's background work: with each subject timing its
// 20 appends in a row, one round's median swung from 1.4 to 3.5 ms while the others' did not.
// So every subject is open at once and they take turns append by append (in a shuffled order),
// for 20 appends a round; three rounds on fresh databases, each round's median reported.
const ROUNDS = 3

/** Session k of the setup, and the k-th appended entry's session (spread over all sessions). */
const sid = (k: number): string => `s_${String(k).padStart(3, '0')}`
const targetOf = (i: number): number => (i * 37) % SESSIONS

/** One subject's series in a round: its i-th append, and what resolves once its subscriber shows it. */
interface Series {
  name: string
  append(i: number): Promise<unknown>
  emitted(i: number): Promise<unknown>
  /** Also times the append to its settling (committed), under this name. */
  committed?: string
}

/** A subject opened for one round: its series and how to close it. */
interface Opened {
  series: Series[]
  close(): Promise<void>
}

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
    const extra = messages(PER_SESSION + REPEATS).slice(PER_SESSION)
    /** Every sample of a series over all rounds (p95 in the notes), and each round's median. */
    const series = new Map<string, { all: number[]; rounds: number[] }>()
    const keep = (name: string, values: number[]): void => {
      const sr = series.get(name) ?? { all: [], rounds: [] }
      series.set(name, sr)
      sr.all.push(...values)
      sr.rounds.push(median(values))
    }
    const expected = (i: number): number => {
      const k = targetOf(i)
      let count = PER_SESSION
      for (let j = 0; j <= i; j++) if (targetOf(j) === k) count++
      return count
    }
    /** The i-th entry a subject appends itself, extending its session's chain (each subject keeps its own). */
    const chainer = (): ((i: number) => { k: number; entry: SessionEntry; count: number }) => {
      const last = new Map<number, { id: string; count: number }>()
      return (i) => {
        const k = targetOf(i)
        const prev = last.get(k) ?? { id: base[PER_SESSION - 1]!.id, count: PER_SESSION }
        const entry: SessionEntry = { id: entryId(PER_SESSION + i), parent_id: prev.id, timestamp: extra[i]!.timestamp, revision: 0, kind: 'message', message: extra[i]! }
        last.set(k, { id: entry.id, count: prev.count + 1 })
        return { k, entry, count: prev.count + 1 }
      }
    }
    /**
     * A subject with a live query per session: once each shows the setup, its i-th append is
     * `add(i)`, emitted when the target session's query holds one row more.
     */
    const watched = async (name: string, sources: Array<Subscribable<readonly unknown[]>>, add: (i: number) => Promise<unknown>, close: () => unknown): Promise<Opened> => {
      const watchers = sources.map((source) => watch(source))
      await Promise.all(watchers.map((w) => w.next((rows) => rows.length === PER_SESSION)))
      return {
        series: [{ name, append: add, emitted: (i) => watchers[targetOf(i)]!.next((rows) => rows.length === expected(i)) }],
        async close() {
          for (const w of watchers) w.stop()
          await close()
        },
      }
    }
    const sessions = <T>(make: (k: number) => T): T[] => Array.from({ length: SESSIONS }, (_, k) => make(k))
    const colloquy = async (label: string, optimistic: boolean): Promise<Opened> => {
      const store = await openColloquy(ctx.dbName(`w5-${label}`))
      for (let k = 0; k < SESSIONS; k++) await store.importSession({ meta: meta(sid(k), PER_SESSION), entries: base, active_leaf: base[PER_SESSION - 1]!.id })
      return watched(
        optimistic ? 'colloquy optimistic' : 'colloquy',
        sessions((k) => store.messages$({ session_id: sid(k), ...(optimistic && { optimistic: true }) })),
        // Colloquy picks the parent (the active leaf) and the id itself.
        (i) => store.append({ session_id: sid(targetOf(i)), message: extra[i]! }),
        () => store.close(),
      )
    }
    const subjects: Record<string, () => Promise<Opened>> = {
      async 'raw idb'() {
        const db = await openRaw(ctx.dbName('w5-raw'))
        for (let k = 0; k < SESSIONS; k++) await putEntries(db, sid(k), base)
        // The same appends again, each entry carrying its session's new version in an indexed
        // stamp, as Colloquy writes it (one put; the index makes the commit slower).
        const stamped = await openRawStamped(ctx.dbName('w5-raw-stamped'))
        for (let k = 0; k < SESSIONS; k++) await putStamped(stamped, sid(k), base, PER_SESSION)
        const plain = chainer()
        const withStamp = chainer()
        return {
          series: [
            { name: 'raw idb', committed: 'raw idb committed', append: (i) => { const { k, entry } = plain(i); return putEntries(db, sid(k), [entry]) }, emitted: () => Promise.resolve() },
            { name: 'raw idb stamped', committed: 'raw idb committed, stamped', append: (i) => { const { k, entry, count } = withStamp(i); return putStamped(stamped, sid(k), [entry], count) }, emitted: () => Promise.resolve() },
          ],
          async close() {
            db.close()
            stamped.close()
          },
        }
      },
      colloquy: () => colloquy('colloquy', false),
      // The opt-in: subscribers shown a write when it is handed to IndexedDB, before it commits.
      'colloquy optimistic': () => colloquy('colloquy-optimistic', true),
      async dexie() {
        const db = new BenchDexie(ctx.dbName('w5-dexie'))
        await db.entries.bulkAdd(sessions((k) => base.map((e) => dexieEntry(sid(k), e))).flat())
        const next = chainer()
        return watched('dexie', sessions((k) => liveQuery(() => dexieSession(db, sid(k)))), (i) => {
          const { k, entry } = next(i)
          return db.entries.add(dexieEntry(sid(k), entry))
        }, () => db.close())
      },
      async rxdb() {
        const rx = await openRx(ctx.dbName('w5-rxdb'))
        await rx.entries.bulkInsert(sessions((k) => base.map((e) => rxEntry(sid(k), e))).flat())
        const next = chainer()
        return watched('rxdb', sessions((k) => rxSession(rx, sid(k)).$), (i) => {
          const { k, entry } = next(i)
          return rx.entries.insert(rxEntry(sid(k), entry))
        }, () => rx.db.close())
      },
    }

    const failed = new Map<string, string>()
    const fail = (name: string, e: unknown): void => void failed.set(name, failure(ctx, name, e))
    for (let r = 0; r < ROUNDS; r++) {
      const open: Array<{ name: string; opened: Opened }> = []
      for (const [name, make] of Object.entries(subjects)) {
        if (failed.has(name)) continue
        try {
          open.push({ name, opened: await make() })
        } catch (e) {
          fail(name, e)
        }
      }
      const all = open.flatMap(({ name, opened }) => opened.series.map((s) => ({ subject: name, s })))
      const times = new Map<string, number[]>()
      const push = (name: string, v: number): void => void (times.get(name) ?? times.set(name, []).get(name)!).push(v)
      const random = rng(100 + r)
      for (let i = 0; i < REPEATS; i++) {
        // Each append in turn, in a shuffled order: no series always follows the same one (what
        // one subject leaves the browser doing would otherwise always land on the next).
        const order = all.map((a) => ({ a, key: random() })).sort((x, y) => x.key - y.key).map(({ a }) => a)
        for (const { subject, s } of order) {
          if (failed.has(subject)) continue
          try {
            const t0 = now()
            const seen = s.emitted(i)
            const write = s.append(i)
            await seen
            push(s.name, now() - t0)
            await write
            if (s.committed) push(s.committed, now() - t0)
          } catch (e) {
            fail(subject, e)
          }
          // Let every subscriber finish reacting before the next append.
          await sleep(20)
        }
      }
      for (const [name, values] of times) if (values.length === REPEATS) keep(name, values)
      ctx.log(`  round ${r + 1}/${ROUNDS}: ${[...times].filter(([, v]) => v.length === REPEATS).map(([n, v]) => `${n} ${median(v).toFixed(3)}`).join(', ')}`)
      for (const { name, opened } of open) await opened.close().catch((e: unknown) => fail(name, e))
      await dropDatabases()
    }
    const outcomes: Partial<Record<Measured, Outcome>> = {}
    for (const s of SUBJECTS) {
      const sr = series.get(s)
      if (failed.has(s)) outcomes[s] = { error: failed.get(s)! }
      else if (sr) outcomes[s] = { values: sr.rounds }
    }
    const p95note = (name: string): string => {
      const all = series.get(name)?.all
      // Commit times are bimodal: how many samples fell in the slow mode says more than a median.
      return all?.length ? `; p95 ${percentile(all, 95).toFixed(2)} ms of ${all.length}, ${all.filter((v) => v > 2).length} over 2 ms` : ''
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
      ...seriesRow('colloquy optimistic', `store.append; 100 messages$({ optimistic: true }) subscribers (an opt-in: emits when the write is handed to IndexedDB, takes it back if the commit fails; events still after the commit); a second store taking its turns with the others; ratio vs Dexie (below 1: ahead)`, 'dexie'),
    ]
  },
}

export default w5
