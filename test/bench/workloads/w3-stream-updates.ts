import type { AssistantMessage, ContentBlock, SessionEntry, Store } from '@colloquy/core'
import { updateMessage } from '@colloquy/core/recipe'
import type { BenchRow, Workload } from '../types.js'
import { rng, text } from '../subjects/data.js'
import { openColloquy } from '../subjects/colloquy.js'
import { BenchDexie, dexieEntry } from '../subjects/dexie.js'
import { countWriteTransactions, macrotask, now } from '../subjects/measure.js'
import { openRaw, putEntries } from '../subjects/raw-idb.js'
import { compareRows, runRounds, type Measured } from '../subjects/rows.js'
import { openRx, rxEntry } from '../subjects/rxdb.js'

const UPDATES = 2_000
const ROUNDS = 5
/** Characters added per update: about one token. */
const STEP = 4

/**
 * W3: a model streams 2,000 content updates into one assistant message. The caller issues one
 * update per macrotask (as a network stream delivers them), never waits for one before the
 * next, and awaits them all at the end; timed to all durable. Colloquy's group commit should
 * fold consecutive updates into few transactions while still firing every update's event.
 */
const w3: Workload = {
  id: 'W3',
  title: '2,000 streamed content updates to one assistant message',
  env: 'browser',
  async run(ctx) {
    const full = text(rng(3), UPDATES * STEP, UPDATES * STEP + 1)
    const contentAt = (i: number): ContentBlock[] => [{ type: 'text', text: full.slice(0, (i + 1) * STEP) }]
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [],
      model: 'bench-model-1',
      provider: 'bench',
      stop_reason: 'end',
      timestamp: 1_700_000_000_000,
    }
    const target: SessionEntry = {
      id: 'e_stream',
      parent_id: null,
      timestamp: 1_700_000_000_000,
      revision: 0,
      kind: 'message',
      message: assistant,
    }
    const updated = (i: number): SessionEntry => ({
      ...target,
      revision: i + 1,
      message: { ...assistant, content: contentAt(i) },
    })

    /** Issues one write per macrotask without awaiting it; resolves when all are durable. */
    const stream = async (write: (i: number) => Promise<unknown>): Promise<number> => {
      const pending: Promise<unknown>[] = []
      const t0 = now()
      for (let i = 0; i < UPDATES; i++) {
        pending.push(write(i))
        await macrotask()
      }
      await Promise.all(pending)
      return now() - t0
    }

    // Installed before any database opens: Dexie binds `IDBDatabase.transaction` when it opens.
    const counter = countWriteTransactions()
    const perUpdate: Partial<Record<Measured, number[]>> = {}
    const events: number[] = []
    const counted = async (s: Measured, run: () => Promise<number>): Promise<number> => {
      const tx0 = counter.count()
      const ms = await run()
      ;(perUpdate[s] ??= []).push((counter.count() - tx0) / UPDATES)
      return ms
    }

    const colloquyTx: number[] = []
    const recipeEvents: number[] = []
    /** Colloquy's two forms: the whole content per update, or an immer recipe adding the token. */
    const colloquy = async (
      r: number,
      subject: 'colloquy' | 'colloquy recipe',
      write: (store: Store, session_id: string, entry_id: string, i: number) => Promise<unknown>,
    ): Promise<number> => {
      const store = await openColloquy(ctx.dbName(`w3-${subject.replace(' ', '-')}-${r}`))
      const { session_id } = await store.create({})
      const { entry_id } = await store.append({ session_id, message: assistant })
      let fired = 0
      const sub = store.on('session::message-updated', { session_id }).subscribe(() => fired++)
      const tx0 = store.engine.transactions
      const ms = await counted(subject, () => stream((i) => write(store, session_id, entry_id, i)))
      const stored = (await store.getMessage({ session_id, entry_id }))?.entry
      // Both forms must end with the same text: the recipe's tokens all landed, in order.
      if (
        stored?.kind !== 'message' ||
        JSON.stringify(stored.message.content) !== JSON.stringify(contentAt(UPDATES - 1))
      )
        throw new Error(`${subject}: the streamed text is not what was sent`)
      if (subject === 'colloquy') {
        colloquyTx.push((store.engine.transactions - tx0) / UPDATES)
        events.push(fired)
      } else recipeEvents.push(fired)
      sub.unsubscribe()
      await store.close()
      return ms
    }
    const token = (i: number): string => full.slice(i * STEP, (i + 1) * STEP)

    const outcomes = await runRounds(
      ctx,
      ROUNDS,
      {
        async 'raw idb'(r) {
          const db = await openRaw(ctx.dbName(`w3-raw-${r}`))
          await putEntries(db, 's1', [target])
          const ms = await counted('raw idb', () => stream((i) => putEntries(db, 's1', [updated(i)])))
          db.close()
          return ms
        },
        colloquy: (r) =>
          colloquy(r, 'colloquy', (store, session_id, entry_id, i) =>
            store.updateMessage({ session_id, entry_id, content: contentAt(i) }),
          ),
        'colloquy recipe': (r) =>
          colloquy(r, 'colloquy recipe', (store, session_id, entry_id, i) =>
            updateMessage(store, { session_id, entry_id }, (draft) => {
              const first = draft[0]
              if (first?.type === 'text') first.text += token(i)
              else draft.unshift({ type: 'text', text: token(i) })
            }),
          ),
        async dexie(r) {
          const db = new BenchDexie(ctx.dbName(`w3-dexie-${r}`))
          await db.entries.add(dexieEntry('s1', target))
          const ms = await counted('dexie', () =>
            stream((i) =>
              db.entries.update(['s1', target.id], {
                'message.content': contentAt(i),
                revision: i + 1,
              } as never),
            ),
          )
          db.close()
          return ms
        },
        async rxdb(r) {
          const rx = await openRx(ctx.dbName(`w3-rxdb-${r}`))
          try {
            const doc = await rx.entries.insert(rxEntry('s1', target))
            return await counted('rxdb', () =>
              stream((i) =>
                doc.incrementalPatch({ message: { ...assistant, content: contentAt(i) }, revision: i + 1 }),
              ),
            )
          } finally {
            await rx.db.close()
          }
        },
      },
      { drop: true },
    )

    counter.stop()
    const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length
    const time = compareRows(outcomes, {
      id: 'W3',
      metric: '2k streamed updates, to all durable',
      unit: 'ms',
      better: 'lower',
      ahead: true,
      notes: {
        'raw idb': 'one put per update',
        colloquy: 'store.updateMessage per update',
        dexie: 'table.update per update',
        rxdb: 'doc.incrementalPatch per update',
        'colloquy recipe':
          'updateMessage(store, request, recipe) from @colloquy/core/recipe per update, the recipe appending the token (immer)',
      },
    })
    // The recipe form is read against the plain form, and said against the libraries in its note.
    for (const row of time) {
      if (row.subject !== 'colloquy recipe') continue
      row.baseline = 'colloquy'
      const other = (s: string): number | undefined =>
        time.find((t) => t.subject === s && Number.isFinite(t.value))?.value
      const ahead = ['dexie', 'rxdb']
        .filter((s) => other(s) !== undefined)
        .map((s) => `${s} ${(other(s)! / row.value).toFixed(2)}x its time`)
      if (ahead.length) row.note = `${row.note}; ${ahead.join(', ')}`
    }
    const txOutcomes = Object.fromEntries(Object.entries(perUpdate).map(([s, v]) => [s, { values: v }]))
    const tx = compareRows(txOutcomes, {
      id: 'W3',
      metric: 'IDB write transactions per update',
      unit: 'tx/update',
      better: 'lower',
      reduce: mean,
    })
    for (const row of tx) {
      if (row.subject !== 'colloquy') continue
      // The target is read on the engine's own count; the IDB-level count (the value) must agree.
      row.target = '<= 0.1'
      row.pass = row.value <= 0.1 && mean(colloquyTx) <= 0.1
      row.note = `mean of ${colloquyTx.length} rounds; store.engine.transactions per update: ${colloquyTx.map((v) => v.toFixed(4)).join(', ')}`
    }
    const eventRow = (subject: string, fired: number[]): BenchRow[] =>
      fired.length
        ? [
            {
              id: 'W3',
              subject,
              metric: 'message-updated events fired',
              value: Math.min(...fired),
              unit: 'events',
              target: `= ${UPDATES} every round`,
              pass: fired.every((n) => n === UPDATES),
              note: `per round: ${fired.join(', ')}`,
            },
          ]
        : []
    return [...time, ...tx, ...eventRow('colloquy', events), ...eventRow('colloquy recipe', recipeEvents)]
  },
}

export default w3
