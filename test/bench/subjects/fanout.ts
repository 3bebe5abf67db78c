import { liveQuery } from 'dexie'
import type { SessionEntry } from '@colloquy/core'
import type { BenchContext } from '../types.js'
import { chain, entryId, messages, meta, rng } from './data.js'
import { openColloquy } from './colloquy.js'
import { BenchDexie, dexieEntry, dexieSession } from './dexie.js'
import { median, now, sleep, watch, type Subscribable } from './measure.js'
import { openRaw, openRawStamped, putEntries, putStamped } from './raw-idb.js'
import { dropDatabases } from './databases.js'
import { failure } from './rows.js'
import { traceIdb } from './idb-trace.js'
import { openRx, rxEntry, rxSession } from './rxdb.js'

// W5's setup and loop (one append, 100 live queries), shared by W5 and its diagnosis (W5D).

export const SESSIONS = 100
export const PER_SESSION = 20

/** Session k of the setup, and the k-th appended entry's session (spread over all sessions). */
const sid = (k: number): string => `s_${String(k).padStart(3, '0')}`
const targetOf = (i: number): number => (i * 37) % SESSIONS
/** A session no live query watches: where a warmed series writes before its timed append. */
const SPARE = sid(SESSIONS)
/** Writes a warmed series makes (each awaited) right before its timed append. */
const WARM_WRITES = 3

/** One series of a subject: its i-th append, and what resolves once its subscriber shows it. */
export interface Series {
  name: string
  append(i: number): Promise<unknown>
  emitted(i: number): Promise<unknown>
  /** Also times the append to its settling (committed), under this name. */
  committed?: string
  /** Run (untimed) right before each timed append: writes elsewhere, so the write path is warm. */
  warm?: () => Promise<unknown>
}

/** A subject opened for one round: its series and how to close it. */
export interface Opened {
  series: Series[]
  close(): Promise<void>
}

/** How a subject is opened: `warm` adds the untimed writes and a " warm" to its series' names. */
export type Open = (warm: boolean) => Promise<Opened>

/**
 * The subjects of W5: 100 sessions of 20 messages each, each watched by a live query (Colloquy
 * `messages$`, Dexie `liveQuery`, RxDB `find().$`); raw idb has no live query, its series time
 * the write alone.
 */
export function fanoutSubjects(
  ctx: BenchContext,
  repeats: number,
): Record<'raw idb' | 'colloquy' | 'colloquy optimistic' | 'dexie' | 'rxdb', Open> {
  const base = chain(PER_SESSION)
  const extra = messages(PER_SESSION + repeats).slice(PER_SESSION)
  const named = (name: string, warm: boolean): string => (warm ? `${name} warm` : name)
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
      const entry: SessionEntry = {
        id: entryId(PER_SESSION + i),
        parent_id: prev.id,
        timestamp: extra[i]!.timestamp,
        revision: 0,
        kind: 'message',
        message: extra[i]!,
      }
      last.set(k, { id: entry.id, count: prev.count + 1 })
      return { k, entry, count: prev.count + 1 }
    }
  }
  /** The n-th entry written to the spare session by the warming writes (ids apart from the timed ones). */
  let spares = 0
  const spare = (): SessionEntry => ({ ...base[0]!, id: `warm_${spares++}`, parent_id: null })
  /**
   * A subject with a live query per session: once each shows the setup, its i-th append is
   * `add(i)`, emitted when the target session's query holds one row more.
   */
  const watched = async (
    name: string,
    sources: Array<Subscribable<readonly unknown[]>>,
    add: (i: number) => Promise<unknown>,
    close: () => unknown,
    warm?: () => Promise<unknown>,
  ): Promise<Opened> => {
    const watchers = sources.map((source) => watch(source))
    await Promise.all(watchers.map((w) => w.next((rows) => rows.length === PER_SESSION)))
    return {
      series: [
        {
          name,
          append: add,
          emitted: (i) => watchers[targetOf(i)]!.next((rows) => rows.length === expected(i)),
          ...(warm && { warm }),
        },
      ],
      async close() {
        for (const w of watchers) w.stop()
        await close()
      },
    }
  }
  const sessions = <T>(make: (k: number) => T): T[] => Array.from({ length: SESSIONS }, (_, k) => make(k))
  const writes = (write: () => Promise<unknown>) => async (): Promise<void> => {
    for (let n = 0; n < WARM_WRITES; n++) await write()
  }
  const colloquy = async (label: string, optimistic: boolean, warm: boolean): Promise<Opened> => {
    const store = await openColloquy(ctx.dbName(`w5-${label}${warm ? '-warm' : ''}`))
    for (let k = 0; k < SESSIONS; k++)
      await store.importSession({
        meta: meta(sid(k), PER_SESSION),
        entries: base,
        active_leaf: base[PER_SESSION - 1]!.id,
      })
    if (warm)
      await store.importSession({
        meta: meta(SPARE, PER_SESSION),
        entries: base,
        active_leaf: base[PER_SESSION - 1]!.id,
      })
    return watched(
      named(optimistic ? 'colloquy optimistic' : 'colloquy', warm),
      sessions((k) => store.messages$({ session_id: sid(k), ...(optimistic && { optimistic: true }) })),
      // Colloquy picks the parent (the active leaf) and the id itself.
      (i) => store.append({ session_id: sid(targetOf(i)), message: extra[i]! }),
      () => store.close(),
      warm ? writes(() => store.append({ session_id: SPARE, message: extra[0]! })) : undefined,
    )
  }
  return {
    async 'raw idb'(warm) {
      const suffix = warm ? '-warm' : ''
      const db = await openRaw(ctx.dbName(`w5-raw${suffix}`))
      for (let k = 0; k < SESSIONS; k++) await putEntries(db, sid(k), base)
      // The same appends again, each entry carrying its session's new version in an indexed
      // stamp, as Colloquy writes it (one put; the index makes the commit slower).
      const stamped = await openRawStamped(ctx.dbName(`w5-raw-stamped${suffix}`))
      for (let k = 0; k < SESSIONS; k++) await putStamped(stamped, sid(k), base, PER_SESSION)
      const plain = chainer()
      const withStamp = chainer()
      const series: Series[] = [
        {
          name: 'raw idb',
          committed: 'raw idb committed',
          append: (i) => {
            const { k, entry } = plain(i)
            return putEntries(db, sid(k), [entry])
          },
          emitted: () => Promise.resolve(),
        },
        {
          name: 'raw idb stamped',
          committed: 'raw idb committed, stamped',
          append: (i) => {
            const { k, entry, count } = withStamp(i)
            return putStamped(stamped, sid(k), [entry], count)
          },
          emitted: () => Promise.resolve(),
        },
      ]
      return {
        // Warmed, only the stamped layout (Colloquy's) is kept: the floor for the others' warm series.
        series: warm
          ? [
              {
                ...series[1]!,
                name: 'raw idb stamped warm',
                committed: 'raw idb committed, stamped warm',
                warm: writes(() => putStamped(stamped, SPARE, [spare()], spares)),
              },
            ]
          : series,
        async close() {
          db.close()
          stamped.close()
        },
      }
    },
    colloquy: (warm) => colloquy('colloquy', false, warm),
    // The opt-in: subscribers shown a write when it is handed to IndexedDB, before it commits.
    'colloquy optimistic': (warm) => colloquy('colloquy-optimistic', true, warm),
    async dexie(warm) {
      const db = new BenchDexie(ctx.dbName(`w5-dexie${warm ? '-warm' : ''}`))
      await db.entries.bulkAdd(sessions((k) => base.map((e) => dexieEntry(sid(k), e))).flat())
      const next = chainer()
      return watched(
        named('dexie', warm),
        sessions((k) => liveQuery(() => dexieSession(db, sid(k)))),
        (i) => {
          const { k, entry } = next(i)
          return db.entries.add(dexieEntry(sid(k), entry))
        },
        () => db.close(),
        warm ? writes(() => db.entries.add(dexieEntry(SPARE, spare()))) : undefined,
      )
    },
    async rxdb(warm) {
      const rx = await openRx(ctx.dbName(`w5-rxdb${warm ? '-warm' : ''}`))
      await rx.entries.bulkInsert(sessions((k) => base.map((e) => rxEntry(sid(k), e))).flat())
      const next = chainer()
      return watched(
        named('rxdb', warm),
        sessions((k) => rxSession(rx, sid(k)).$),
        (i) => {
          const { k, entry } = next(i)
          return rx.entries.insert(rxEntry(sid(k), entry))
        },
        () => rx.db.close(),
        warm ? writes(() => rx.entries.insert(rxEntry(SPARE, spare()))) : undefined,
      )
    },
  }
}

/** Each series' samples over all rounds, and each round's median. */
export interface SeriesTimes {
  all: number[]
  rounds: number[]
}

/** Where one timed append's time went (see `runFanout`'s `phases`). */
export interface Phases {
  /** From the call to its first read-write transaction being created. */
  pre: number[]
  /** That transaction, from created to its `complete` event. */
  life: number[]
  /** From `complete` to the subscriber's emission (negative: emitted before the commit), or to the write settling. */
  post: number[]
}

/**
 * Opens every subject (`open`: name to opener and whether warmed) for each round and has them take
 * turns, one timed append each, in a seeded shuffled order, `repeats` appends a round, on fresh
 * databases each round. A subject that fails is reported and skipped. With `phases`, the first
 * read-write transaction each timed append creates is timed too (see `traceIdb`).
 */
export async function runFanout(
  ctx: BenchContext,
  open: ReadonlyArray<readonly [string, Open, boolean]>,
  o: { rounds: number; repeats: number; phases?: boolean },
): Promise<{ series: Map<string, SeriesTimes>; failed: Map<string, string>; phases: Map<string, Phases> }> {
  const series = new Map<string, SeriesTimes>()
  const failed = new Map<string, string>()
  const phases = new Map<string, Phases>()
  const fail = (name: string, e: unknown): void => void failed.set(name, failure(ctx, name, e))
  const trace = o.phases ? traceIdb() : undefined
  try {
    for (let r = 0; r < o.rounds; r++) {
      const opened: Array<{ name: string; opened: Opened }> = []
      for (const [name, make, warm] of open) {
        if (failed.has(name)) continue
        try {
          opened.push({ name, opened: await make(warm) })
        } catch (e) {
          fail(name, e)
        }
      }
      const all = opened.flatMap(({ name, opened: s }) => s.series.map((one) => ({ subject: name, s: one })))
      const times = new Map<string, number[]>()
      const push = (name: string, v: number): void =>
        void (times.get(name) ?? times.set(name, []).get(name)!).push(v)
      const random = rng(100 + r)
      for (let i = 0; i < o.repeats; i++) {
        // Each append in turn, in a shuffled order: no series always follows the same one (what
        // one subject leaves the browser doing would otherwise always land on the next).
        const order = all
          .map((a) => ({ a, key: random() }))
          .sort((x, y) => x.key - y.key)
          .map(({ a }) => a)
        for (const { subject, s } of order) {
          if (failed.has(subject)) continue
          try {
            if (s.warm) await s.warm()
            trace?.arm()
            const t0 = now()
            const seen = s.emitted(i)
            const write = s.append(i)
            await seen
            const emitted = now()
            push(s.name, emitted - t0)
            await write
            const settled = now()
            if (s.committed) push(s.committed, settled - t0)
            const tx = trace?.times
            if (tx?.created && tx.complete) {
              // A series without a live query shows its write once it settles.
              const name = s.committed ?? s.name
              const p = phases.get(name) ?? phases.set(name, { pre: [], life: [], post: [] }).get(name)!
              p.pre.push(tx.created - t0)
              p.life.push(tx.complete - tx.created)
              p.post.push((s.committed ? settled : emitted) - tx.complete)
            }
          } catch (e) {
            fail(subject, e)
          }
          // Let every subscriber finish reacting before the next append.
          await sleep(20)
        }
      }
      for (const [name, values] of times) {
        if (values.length !== o.repeats) continue
        const sr = series.get(name) ?? series.set(name, { all: [], rounds: [] }).get(name)!
        sr.all.push(...values)
        sr.rounds.push(median(values))
      }
      ctx.log(
        `  round ${r + 1}/${o.rounds}: ${[...times]
          .filter(([, v]) => v.length === o.repeats)
          .map(([n, v]) => `${n} ${median(v).toFixed(3)}`)
          .join(', ')}`,
      )
      for (const { name, opened: s } of opened) await s.close().catch((e: unknown) => fail(name, e))
      await dropDatabases()
    }
  } finally {
    trace?.restore()
  }
  return { series, failed, phases }
}
