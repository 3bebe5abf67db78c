import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import { enableSearch } from '@colloquy/core/search'
import type { BenchRow, Workload } from '../types.js'
import { branchedSession, messages } from '../subjects/data.js'
import { firstValue, median, now } from '../subjects/measure.js'

// Issue 26's figures: the store with encryption on against the same store with it off, in one
// page and one run, subjects taking turns round by round (a busy spell hits both alike). The
// workloads are W1-W4's, smaller where W1 and W4 take long (stated in each row), the 1 MB
// attachment (its put and its cold read timed READS times per subject, subjects taking turns),
// the key derivation on unlock, and the search index built in memory on unlock (an encrypted
// store's index is never persisted), and a live first screen: W4's branched session read cold by
// `messages$`, and the first append to that session by a store opened cold. `E1_ONLY=live` runs
// those two rows alone, `E1_ONLY=read` the attachment's put, cold read and floor (a look at them,
// not kept: a run keeps the rows of the workloads it ran, and this one would then lack the others).

/** Rounds of the live first screen and first append (each imports W4's session twice). */
const ROUNDS = 3
/**
 * Rounds of the W1, W2 and W4 shapes, unlock and search: enough that one busy spell on a shared
 * machine (a round of W2 or W4 taking twice its time) does not decide a median. W3 runs in the
 * first ROUNDS of them only: it is about 9 s a subject (2,000 macrotasks at the timer clamp), far
 * within its bound, and at every round it would take the workload near the runner's 15-minute
 * limit on a busy machine.
 */
const W_ROUNDS = 7
const SERIAL = 1_000
const BURST = 10_000
const UPDATES = 2_000
const COLD = 10_000
/** W4's session: 10,000 entries in 20 branches, the active path about 900 of them. */
const BRANCHES = 20
const LIVE_SID = 's_live'
const MB = 1024 * 1024
const passphrase = 'bench passphrase'

type Subject = 'clear' | 'encrypted'
const SUBJECTS: Subject[] = ['clear', 'encrypted']

const open = (name: string, s: Subject): Promise<Store> =>
  createStore({
    storage: indexedDbStorage({ name }),
    multiTab: false,
    ...(s === 'encrypted' && { encryption: { passphrase } }),
  })

const e1: Workload = {
  id: 'E1',
  title: 'encryption on vs off: W1-W4 shapes, 1 MB attachment, unlock, search on unlock',
  env: 'browser',
  async run(ctx) {
    if (ctx.env?.('E1_ONLY') === 'live') return rowsOf(await liveTimes(ctx))
    const bytes = new Uint8Array(MB)
    for (let i = 0; i < MB; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    if (ctx.env?.('E1_ONLY') === 'read') return rowsOf(await attachmentTimes(ctx, bytes))
    const msgs = messages(BURST)
    const times = new Map<string, number[]>()
    const add = (metric: string, s: Subject, ms: number): void => {
      const k = `${metric}\u0000${s}`
      times.set(k, [...(times.get(k) ?? []), ms])
    }
    for (let r = 0; r < W_ROUNDS; r++) {
      for (const s of r % 2 ? [...SUBJECTS].reverse() : SUBJECTS) {
        const name = ctx.dbName(`e1-${s}-${r}`)
        let t = now()
        let store = await open(name, s)
        add('open a new store (encrypted: keyring made, PBKDF2 600k)', s, now() - t)
        // W1: serial appends, each awaited.
        const { session_id } = await store.create({})
        t = now()
        for (let i = 0; i < SERIAL; i++) await store.append({ session_id, message: msgs[i]! })
        add(`W1 shape: ${SERIAL} serial appends`, s, now() - t)
        // W2: a burst issued in one tick.
        const burst = await store.create({})
        t = now()
        await Promise.all(msgs.map((message) => store.append({ session_id: burst.session_id, message })))
        add(`W2 shape: ${BURST} appends in one tick`, s, now() - t)
        // W3: streamed updates of one message, one per macrotask, awaited at the end.
        if (r < ROUNDS) {
          const { entry_id } = await store.append({ session_id, message: msgs[0]! })
          t = now()
          const pending: Promise<unknown>[] = []
          for (let i = 0; i < UPDATES; i++) {
            pending.push(
              store.updateMessage({
                session_id,
                entry_id,
                content: [{ type: 'text', text: 'x'.repeat(4 * (i + 1)) }],
              }),
            )
            await new Promise((resolve) => setTimeout(resolve, 0))
          }
          await Promise.all(pending)
          add(`W3 shape: ${UPDATES} streamed updates`, s, now() - t)
        }
        await store.close()
        // Unlock: opening an existing store (encrypted: PBKDF2 600k and the keys unwrapped).
        t = now()
        store = await open(name, s)
        add('open an existing store (encrypted: key derivation on unlock)', s, now() - t)
        // W4: cold read of a session of 10,000 entries.
        t = now()
        const page = await store.messages({ session_id: burst.session_id, limit: 50 })
        if (!page.messages.length) throw new Error('nothing read')
        add(`W4 shape: first page of a ${COLD}-entry session, cold`, s, now() - t)
        // The search index over everything, built on open (in memory only when encrypted).
        t = now()
        const search = await enableSearch(store)
        await search.query({ query: 'the' })
        add(`search index built on open/unlock (${SERIAL + BURST + 1} messages)`, s, now() - t)
        search.close()
        await store.close()
        await new Promise<void>((resolve) => {
          const d = indexedDB.deleteDatabase(name)
          d.onsuccess = d.onerror = d.onblocked = () => resolve()
        })
        indexedDB.deleteDatabase(`${name}:search`)
      }
    }
    for (const [metric, ms] of await attachmentTimes(ctx, bytes)) times.set(metric, ms)
    for (const [metric, ms] of await liveTimes(ctx)) times.set(metric, ms)
    return rowsOf(times)
  },
}

const PUT = '1 MB attachment put'
const READ = '1 MB attachment read (cold)'
const FLOOR = 'floor: 1 MB clear read (cold) and one Blob made of its bytes'
/** Cold reads per subject: enough for a median a busy spell on a shared machine does not decide. */
const READS = 11

/**
 * The 1 MB attachment put and read cold, READS times per subject. Each subject's database takes
 * READS attachments of the same bytes, each in a session of its own, subjects taking turns put by
 * put; then each read is of one never read before, by a store opened just for it (closed after),
 * subjects taking turns read by read. The floor is that of a read
 * that opens: the clear read, then the one Blob an encrypted read must make of the bytes it
 * opened (the contract returns a Blob; decryption not counted).
 */
async function attachmentTimes(
  ctx: { dbName(label: string): string },
  bytes: Uint8Array<ArrayBuffer>,
): Promise<Map<string, number[]>> {
  const times = new Map<string, number[]>()
  const add = (metric: string, s: Subject, ms: number): void =>
    void times.set(`${metric}\u0000${s}`, [...(times.get(`${metric}\u0000${s}`) ?? []), ms])
  // One attachment per session, as in the rounds: a head holds the metadata of its attachments
  // only, which an encrypted read opens beside the bytes.
  const held = new Map<Subject, { name: string; ids: Array<[string, string]>; store: Store }>()
  for (const s of SUBJECTS) {
    const name = ctx.dbName(`e1-read-${s}`)
    held.set(s, { name, ids: [], store: await open(name, s) })
  }
  for (let i = 0; i < READS; i++) {
    for (const s of i % 2 ? [...SUBJECTS].reverse() : SUBJECTS) {
      const { store, ids } = held.get(s)!
      const { session_id } = await store.create({})
      const t = now()
      const { attachment } = await store.putAttachment({ session_id, name: 'a.bin', file: new Blob([bytes]) })
      add(PUT, s, now() - t)
      if (attachment.size !== MB) throw new Error('the attachment lost bytes')
      ids.push([session_id, attachment.attachment_id])
    }
  }
  for (const { store } of held.values()) await store.close()
  for (let i = 0; i < READS; i++) {
    for (const s of i % 2 ? [...SUBJECTS].reverse() : SUBJECTS) {
      const { name, ids } = held.get(s)!
      const [session_id, attachment_id] = ids[i]!
      const store = await open(name, s)
      const t = now()
      const blob = await store.getAttachmentBlob(session_id, attachment_id)
      const read = await blob!.arrayBuffer()
      add(READ, s, now() - t)
      if (s === 'clear') {
        if (new Blob([read]).size !== MB) throw new Error('the Blob lost bytes')
        add(FLOOR, s, now() - t)
      } else if (read.byteLength !== MB) throw new Error('the read lost bytes')
      await store.close()
    }
  }
  for (const { name } of held.values())
    await new Promise<void>((resolve) => {
      const d = indexedDB.deleteDatabase(name)
      d.onsuccess = d.onerror = d.onblocked = () => resolve()
    })
  return times
}

const LIVE = `live first screen of a ${COLD}-entry session (messages$ first emission)`
const FIRST_APPEND = `first append to a ${COLD}-entry session (store opened cold)`

/**
 * The live first screen: W4's branched session imported, the store closed and opened again (the
 * unlock is not timed: its own row has it), then from subscribing `messages$` to its first value,
 * the active path. Closes `store`.
 */
async function liveFirstScreen(store: Store, name: string, s: Subject): Promise<number> {
  await store.importSession(branchedSession(LIVE_SID, COLD, BRANCHES))
  await store.close()
  const cold = await open(name, s)
  const t = now()
  const items = await firstValue(cold.messages$({ session_id: LIVE_SID }))
  const ms = now() - t
  await cold.close()
  if (items.length === 0) throw new Error('messages$ emitted an empty path')
  return ms
}

/**
 * The first write a store opened cold makes to W4's session (imported by `liveFirstScreen`):
 * one awaited append, nothing read before it. An encrypted store loads the session's entries
 * sealed and opens none of them for it (the parent chain's ids are clear).
 */
async function firstAppend(name: string, s: Subject): Promise<number> {
  const cold = await open(name, s)
  const [message] = messages(1)
  const t = now()
  await cold.append({ session_id: LIVE_SID, message: message! })
  const ms = now() - t
  await cold.close()
  return ms
}

/**
 * The live first screen's and the first append's times, on databases of their own (nothing else in them, no search
 * index beside them), subjects taking turns round by round.
 */
async function liveTimes(ctx: { dbName(label: string): string }): Promise<Map<string, number[]>> {
  const times = new Map<string, number[]>()
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 ? [...SUBJECTS].reverse() : SUBJECTS) {
      const name = ctx.dbName(`e1-live-${s}-${r}`)
      const add = (metric: string, ms: number): void =>
        void times.set(`${metric}\u0000${s}`, [...(times.get(`${metric}\u0000${s}`) ?? []), ms])
      add(LIVE, await liveFirstScreen(await open(name, s), name, s))
      add(FIRST_APPEND, await firstAppend(name, s))
      await new Promise<void>((resolve) => {
        const d = indexedDB.deleteDatabase(name)
        d.onsuccess = d.onerror = d.onblocked = () => resolve()
      })
    }
  }
  return times
}

function rowsOf(times: ReadonlyMap<string, number[]>): BenchRow[] {
  const rows: BenchRow[] = []
  const metrics = [...new Set([...times.keys()].map((k) => k.split('\u0000')[0]!))]
  for (const metric of metrics) {
    for (const s of SUBJECTS) {
      // A metric only one subject has (the read's floor: clear only).
      if (!times.has(`${metric}\u0000${s}`)) continue
      rows.push({
        id: 'E1',
        subject: `colloquy ${s}`,
        metric,
        value: median(times.get(`${metric}\u0000${s}`)!),
        unit: 'ms',
        better: 'lower',
        ...(s === 'encrypted' && { baseline: 'colloquy clear' }),
        note:
          metric === LIVE
            ? `W4's session (${BRANCHES} branches, the active path about 900 entries) imported, store opened again, messages$ subscribed to first value; median of ${ROUNDS} rounds, alternating with the other subject`
            : metric === FIRST_APPEND
              ? `W4's session (${BRANCHES} branches) imported, store opened again, one awaited append with nothing read before it; median of ${ROUNDS} rounds, alternating with the other subject`
              : metric === PUT
                ? `median of ${READS} puts (each into a session of its own), alternating put by put with the other subject`
                : metric === READ || metric === FLOOR
                  ? `median of ${READS} cold reads (each of an attachment never read before, by a store opened for it), alternating read by read with the other subject`
                  : `median of ${metric.startsWith('W3') ? ROUNDS : W_ROUNDS} rounds, alternating with the other subject`,
      })
    }
  }
  return rows
}

export default e1
