import type { AssistantMessage, Store } from '@colloquy/core'
import { enableSearch, type Search } from '@colloquy/core/search'
import type { BenchRow, Workload } from '../types.js'
import { messages, rng, text } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { macrotask, median, now, trimmedSum } from '../subjects/measure.js'

/** W1's and W3's sizes and rounds (`workloads/w1-serial-appends.ts`, `w3-stream-updates.ts`). */
const W1_APPENDS = 10_000
const W1_ROUNDS = 25
const W1_WARMUP = 200
/** Each variant's slowest W1 rounds left out of the trimmed total (a tenth of them). */
const W1_TRIM = Math.round(W1_ROUNDS / 10)
const W3_UPDATES = 2_000
const W3_ROUNDS = 6
const STEP = 4

type Variant = 'colloquy' | 'colloquy + search'
const VARIANTS: Variant[] = ['colloquy', 'colloquy + search']

/**
 * SEARCH_KEEP: what keeping a search index costs the writes. W1 (10,000 appends awaited one by
 * one, in slices) and W3 (2,000 streamed updates of one reply, one per macrotask, all awaited at
 * the end) on two stores, one with `enableSearch` on, the two taking turns slice by slice (the
 * order alternating) so a busy spell hits both alike. With search, each slice and each stream is
 * timed until the index holds it (`search.flush()`): the cost of an index that is current.
 */
const searchKeep: Workload = {
  id: 'SEARCH_KEEP',
  title: 'W1 and W3 with search enabled vs without',
  env: 'browser',
  async run(ctx) {
    const rows: BenchRow[] = []
    const msgs = messages(W1_APPENDS + W1_WARMUP)
    const stores = {} as Record<Variant, { store: Store; session_id: string; search?: Search }>
    for (const v of VARIANTS) {
      const store = await openColloquy(ctx.dbName(`search-keep-w1-${v === 'colloquy' ? 'plain' : 'search'}`))
      const search = v === 'colloquy' ? undefined : await enableSearch(store)
      const warm = await store.create({})
      for (const m of msgs.slice(W1_APPENDS)) await store.append({ session_id: warm.session_id, message: m })
      await search?.flush()
      const { session_id } = await store.create({})
      stores[v] = { store, session_id, search }
    }
    const w1: Record<Variant, number[]> = { colloquy: [], 'colloquy + search': [] }
    /** With search: each round's wait for its index after the last append (the rest of the round is the appends). */
    const flushes: number[] = []
    const slice = W1_APPENDS / W1_ROUNDS
    for (let r = 0; r < W1_ROUNDS; r++) {
      for (const v of r % 2 ? [...VARIANTS].reverse() : VARIANTS) {
        const { store, session_id, search } = stores[v]
        const t0 = now()
        for (let i = r * slice; i < (r + 1) * slice; i++)
          await store.append({ session_id, message: msgs[i]! })
        const t1 = now()
        await search?.flush()
        w1[v].push(now() - t0)
        if (search) flushes.push(now() - t1)
      }
    }
    const found = await stores['colloquy + search'].search!.query({ query: 'the', limit: 1 })
    if (found.hits.length === 0) throw new Error('the index found nothing of what W1 wrote')
    for (const v of VARIANTS) {
      stores[v].search?.close()
      await stores[v].store.close()
    }

    const full = text(rng(3), W3_UPDATES * STEP, W3_UPDATES * STEP + 1)
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [],
      model: 'bench-model-1',
      provider: 'bench',
      stop_reason: 'end',
      timestamp: 1_700_000_000_000,
    }
    const w3: Record<Variant, number[]> = { colloquy: [], 'colloquy + search': [] }
    for (let r = 0; r < W3_ROUNDS; r++) {
      for (const v of r % 2 ? [...VARIANTS].reverse() : VARIANTS) {
        const store = await openColloquy(ctx.dbName(`search-keep-w3-${r}`))
        const search = v === 'colloquy' ? undefined : await enableSearch(store)
        const { session_id } = await store.create({})
        const { entry_id } = await store.append({ session_id, message: assistant })
        await search?.flush()
        const pending: Promise<unknown>[] = []
        const t0 = now()
        for (let i = 0; i < W3_UPDATES; i++) {
          pending.push(
            store.updateMessage({
              session_id,
              entry_id,
              content: [{ type: 'text', text: full.slice(0, (i + 1) * STEP) }],
            }),
          )
          await macrotask()
        }
        await Promise.all(pending)
        await search?.flush()
        w3[v].push(now() - t0)
        if (search) {
          const last = full
            .slice(0, W3_UPDATES * STEP)
            .split(/\s+/)
            .at(-2)!
          if (!(await search.query({ query: last, limit: 1 })).hits.length)
            throw new Error('the index does not hold the streamed reply')
          search.close()
        }
        await store.close()
      }
    }

    const sum = (v: number[]): number => v.reduce((a, b) => a + b, 0)
    const report = (
      metric: string,
      values: Record<Variant, number[]>,
      reduce: (v: number[]) => number,
      how: string,
      searchNote = '',
    ) => {
      const plain = reduce(values.colloquy)
      const searched = reduce(values['colloquy + search'])
      const range = (v: number[]) => `${Math.min(...v).toFixed(1)} to ${Math.max(...v).toFixed(1)}`
      rows.push(
        {
          id: 'SEARCH_KEEP',
          subject: 'colloquy',
          metric,
          value: plain,
          unit: 'ms',
          better: 'lower',
          note: `${how}; rounds ${range(values.colloquy)}`,
        },
        {
          id: 'SEARCH_KEEP',
          subject: 'colloquy + search',
          metric,
          value: searched,
          unit: 'ms',
          better: 'lower',
          baseline: 'colloquy',
          target: '<= 1.1x colloquy',
          pass: searched <= plain * 1.1,
          note: `${how}, enableSearch on, each round until the index holds it (flush); rounds ${range(values['colloquy + search'])}${searchNote}`,
        },
      )
    }
    report(
      'W1 10k serial appends',
      w1,
      sum,
      `${W1_APPENDS} store.append awaited, ${W1_ROUNDS} slices taking turns, total`,
      `; of which waiting for the index after a round's last append: ${sum(flushes).toFixed(0)} ms (median round ${median(flushes).toFixed(1)} ms); median of the rounds' ratios (each round against the one it took turns with, a stalled round weighing as one) ${median(w1['colloquy + search'].map((t, r) => t / w1.colloquy[r]!)).toFixed(2)}x`,
    )
    report(
      'W1 10k serial appends, trimmed total',
      w1,
      (v) => trimmedSum(v, W1_TRIM),
      `${W1_APPENDS} store.append awaited, ${W1_ROUNDS} slices taking turns, total of the ${W1_ROUNDS - W1_TRIM} fastest (each variant's ${W1_TRIM} slowest rounds left out alike: one stalled round on a shared machine moved the plain total by seconds)`,
    )
    report(
      'W3 2k streamed updates',
      w3,
      median,
      `${W3_UPDATES} updateMessage, one per macrotask, all awaited; median of ${W3_ROUNDS / 2} rounds each`,
    )
    return rows
  },
}

export default searchKeep
