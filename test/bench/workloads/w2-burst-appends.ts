import type { BenchContext, BenchRow, Workload } from '../types.js'
import { chain, messages } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry } from '../subjects/dexie.js'
import { median, now } from '../subjects/measure.js'
import { traceIdb } from '../subjects/idb-trace.js'
import { openRaw, openRawStamped, putEntries, putStamped } from '../subjects/raw-idb.js'
import { compareRows, runRounds, type Measured, type Outcome } from '../subjects/rows.js'
import { openRx, rxEntry } from '../subjects/rxdb.js'

const N = 10_000
const ROUNDS = 5

/** Times one subject's write (ms); the diagnosis (W2D) also notes where the time went. */
type Timer = (subject: string, write: () => Promise<unknown>) => Promise<number>

const timed: Timer = async (_, write) => {
  const t0 = now()
  await write()
  return now() - t0
}

/**
 * The subjects of W2, each writing 10,000 entries into a fresh database per round, timed by `time`:
 * each subject's rounds (ms), and Colloquy's transactions per round.
 */
async function burst(
  ctx: BenchContext,
  time: Timer,
): Promise<{ outcomes: Partial<Record<Measured, Outcome>>; txs: number[] }> {
  const msgs = messages(N)
  const entries = chain(N)
  const txs: number[] = []
  const outcomes = await runRounds(
    ctx,
    ROUNDS,
    {
      async 'raw idb'(r) {
        const db = await openRaw(ctx.dbName(`w2-raw-${r}`))
        const ms = await time('raw idb', () => putEntries(db, 's1', entries))
        db.close()
        return ms
      },
      async 'raw idb stamped'(r) {
        const db = await openRawStamped(ctx.dbName(`w2-raw-stamped-${r}`))
        const ms = await time('raw idb stamped', () => putStamped(db, 's1', entries, N))
        db.close()
        return ms
      },
      async colloquy(r) {
        const store = await openColloquy(ctx.dbName(`w2-colloquy-${r}`))
        const { session_id } = await store.create({})
        const tx0 = store.engine.transactions
        const ms = await time('colloquy', () =>
          Promise.all(msgs.map((message) => store.append({ session_id, message }))),
        )
        txs.push(store.engine.transactions - tx0)
        await store.close()
        return ms
      },
      async dexie(r) {
        const db = new BenchDexie(ctx.dbName(`w2-dexie-${r}`))
        await db.open()
        const recs = entries.map((e) => dexieEntry('s1', e))
        const ms = await time('dexie', () => db.entries.bulkAdd(recs))
        db.close()
        return ms
      },
      async rxdb(r) {
        const rx = await openRx(ctx.dbName(`w2-rxdb-${r}`))
        try {
          const docs = entries.map((e) => rxEntry('s1', e))
          return await time('rxdb', async () => {
            const res = await rx.entries.bulkInsert(docs)
            if (res.error.length) throw new Error(`bulkInsert: ${res.error.length} errors`)
          })
        } finally {
          await rx.db.close()
        }
      },
    },
    { drop: true },
  )
  return { outcomes, txs }
}

/**
 * W2: 10,000 appends issued at once (an import, a paste, a sync burst), timed until all are
 * durable, as throughput. Colloquy gets 10,000 separate `append` calls (its group commit has to
 * find the batch); raw idb writes them in one transaction, Dexie with `bulkAdd`, RxDB with
 * `bulkInsert`, their best bulk paths. Every round writes into a fresh database.
 */
const w2: Workload = {
  id: 'W2',
  title: '10,000 appends issued at once',
  env: 'browser',
  async run(ctx) {
    const { outcomes: times, txs } = await burst(ctx, timed)
    const rate = (ms: number): number => (N / ms) * 1000
    const outcomes: Partial<Record<Measured, Outcome>> = {}
    for (const [s, o] of Object.entries(times) as Array<[Measured, Outcome]>)
      outcomes[s] = 'error' in o ? o : { values: o.values.map(rate) }
    return compareRows(outcomes, {
      id: 'W2',
      metric: '10k appends at once',
      unit: 'appends/s',
      better: 'higher',
      ahead: true,
      vsRaw: { min: 0.9, text: '>= 0.9x raw idb' },
      notes: {
        'raw idb': 'one transaction, 10k puts',
        'raw idb stamped':
          "the same into a store laid out as Colloquy's (indexed stamps; the newest entry carries the session's version): what that layout costs: Chromium deserializes a copy of every value put into an indexed store to find its index keys",
        colloquy: `10k store.append in one tick; transactions per round: ${txs.join(', ')}`,
        dexie: 'bulkAdd',
        rxdb: 'bulkInsert',
      },
    })
  },
}

/**
 * W2D: where W2's time goes (a diagnosis, no target): W2's rounds with IndexedDB traced (see
 * `traceIdb`): from the first call to the first record written, the span of the record writes,
 * and from the first record written to the commit. The IndexedDB backend writes while the page
 * still issues records, so how soon the first goes out and how fast the rest follow both count.
 */
const w2d: Workload = {
  id: 'W2D',
  title: 'W2 by phase',
  env: 'browser',
  async run(ctx) {
    const trace = traceIdb()
    const phases = new Map<string, { first: number[]; span: number[]; inside: number[]; tail: number[] }>()
    try {
      const { outcomes } = await burst(ctx, async (subject, write) => {
        trace.arm()
        const t0 = now()
        await write()
        const ms = now() - t0
        const { firstWrite, lastWrite, inWrites, complete } = trace.times
        const p =
          phases.get(subject) ??
          phases.set(subject, { first: [], span: [], inside: [], tail: [] }).get(subject)!
        p.first.push(firstWrite - t0)
        p.span.push(lastWrite - firstWrite)
        p.inside.push(inWrites)
        p.tail.push(complete - firstWrite)
        return ms
      })
      const rows: BenchRow[] = []
      // RxDB writes through more than one transaction: the trace sees only its first.
      for (const [subject, o] of Object.entries(outcomes).filter(([s]) => s !== 'rxdb')) {
        const p = phases.get(subject)
        if ('error' in o || !p) {
          rows.push({
            id: 'W2D',
            subject,
            metric: 'error',
            value: NaN,
            unit: '',
            note: 'error' in o ? o.error : 'no phases',
          })
          continue
        }
        const row = (metric: string, values: number[], note: string): void =>
          void rows.push({
            id: 'W2D',
            subject,
            metric,
            value: median(values),
            unit: 'ms',
            better: 'lower',
            note: `${note}; median of ${values.length}: ${values.map((v) => +v.toPrecision(3)).join(', ')}`,
          })
        row('total', o.values, 'the 10,000 writes, issued to committed')
        row('call -> first record written', p.first, 'from the first call to the first put/add')
        row('record writes span', p.span, 'from the first put/add to the last')
        row(
          'inside record writes',
          p.inside,
          'the time spent inside the put/add calls (serializing each value and handing it over)',
        )
        row(
          'first record written -> commit',
          p.tail,
          "from the first put/add to the transaction's complete event",
        )
      }
      return rows
    } finally {
      trace.restore()
    }
  },
}

export default [w2, w2d]
