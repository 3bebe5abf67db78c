import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import { createSync, openOrCreateKeyring } from '@colloquy/sync'

// The browser side of S1–S3: each function opens a fresh IndexedDB store in this page and
// measures one thing; the Node workload (s1-s3-sync.ts) drives pages and the server.

const user = (i: number) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}` }],
  timestamp: i,
})
const now = (): number => performance.timeOrigin + performance.now()
let n = 0
const fresh = (label: string): Promise<Store> =>
  createStore({ storage: indexedDbStorage({ name: `${label}-${Date.now()}-${++n}` }) })

/** Counts the sync client's requests by path. */
function countingFetch(counts: Record<string, number>): typeof fetch {
  return (input, init) => {
    const path = new URL(String(input)).pathname
    counts[path] = (counts[path] ?? 0) + 1
    return fetch(input, init)
  }
}

const bench = {
  /** S1: an empty store pulls everything the server holds for this user. */
  async s1(url: string, token: string) {
    const store = await fresh('s1')
    const counts: Record<string, number> = {}
    const sync = createSync(store, { url, token, fetch: countingFetch(counts) })
    const t0 = now()
    sync.start()
    await sync.flush()
    const ms = now() - t0
    const { sessions } = await store.list({ limit: 500 })
    const entries = sessions.reduce((a, m) => a + m.message_count, 0)
    sync.close()
    await store.close()
    return { ms, sessions: sessions.length, entries, requests: counts['/sync/pull'] ?? 0 }
  },

  /** The same data written locally: `sessions` sessions of `per` appends, all issued at once (W2's strategy). */
  async w2(sessions: number, per: number) {
    const store = await fresh('s1-w2')
    const ids = await Promise.all(
      Array.from({ length: sessions }, (_, k) =>
        store.create({ title: `session ${k}` }).then((r) => r.session_id),
      ),
    )
    const t0 = now()
    await Promise.all(
      ids.flatMap((session_id) =>
        Array.from({ length: per }, (_, i) => store.append({ session_id, message: user(i) })),
      ),
    )
    const ms = now() - t0
    await store.close()
    return { ms }
  },

  /** S2: appends made offline, then pushed when sync starts. */
  async s2(url: string, token: string, appends: number) {
    const store = await fresh('s2')
    const counts: Record<string, number> = {}
    const sync = createSync(store, { url, token, fetch: countingFetch(counts) })
    const { session_id } = await store.create({ title: 'offline' })
    for (let i = 0; i < appends; i++) await store.append({ session_id, message: user(i) })
    const t0 = now()
    sync.start()
    await sync.flush()
    const ms = now() - t0
    sync.close()
    await store.close()
    return {
      ms,
      pushes: counts['/sync/push'] ?? 0,
      requests: Object.values(counts).reduce((a, b) => a + b, 0),
    }
  },

  /**
   * U1: one attachment of `bytes` put (not timed), then uploaded when sync starts, until flushed:
   * in clear, or end-to-end encrypted with the store encrypted at rest and sync sealing with its
   * keys, or with a clear store and the server's keyring. Its first 64 KiB are random, so the
   * server never takes it for bytes it already holds.
   */
  async upload(url: string, token: string, mode: 'clear' | 'store keys' | 'server keyring', bytes: number) {
    const passphrase = 'u1 passphrase'
    const store = await createStore({
      storage: indexedDbStorage({ name: `u1-${Date.now()}-${++n}` }),
      limits: { max_attachment_bytes: 2 ** 28 },
      ...(mode === 'store keys' && { encryption: { passphrase } }),
    })
    const keyring =
      mode === 'server keyring' ? await openOrCreateKeyring({ url, token }, { passphrase }) : undefined
    const sync = createSync(store, { url, token, ...(keyring && { keyring }) })
    const { session_id } = await store.create({})
    const parts: Uint8Array<ArrayBuffer>[] = []
    for (let at = 0; at < bytes; at += 2 ** 20)
      parts.push(new Uint8Array(Math.min(2 ** 20, bytes - at)).fill(7))
    crypto.getRandomValues(parts[0].subarray(0, 65_536))
    await store.putAttachment({ session_id, file: new File(parts, 'u1.bin') })
    parts.length = 0
    const t0 = now()
    sync.start()
    await sync.flush()
    const ms = now() - t0
    sync.close()
    await store.close()
    return { ms }
  },

  store: undefined as Store | undefined,
  sync: undefined as ReturnType<typeof createSync> | undefined,
  /** S3, both sides: one synced device per page. */
  async open(url: string, token: string) {
    bench.store = await fresh('s3')
    bench.sync = createSync(bench.store, { url, token })
    bench.sync.start()
    await bench.sync.flush()
  },
  flush: () => bench.sync!.flush(),
  async createReply() {
    const s = bench.store!
    const { session_id } = await s.create({ title: 'latency' })
    const { entry_id } = await s.append({
      session_id,
      message: {
        role: 'assistant',
        content: [],
        model: 'm',
        provider: 'p',
        stop_reason: 'end',
        timestamp: 0,
      },
    })
    await bench.sync!.flush()
    return { session_id, entry_id }
  },
  /** The receiving device: when each revision of the entry reached its live query. */
  seen: new Map<number, number>(),
  watch(session_id: string, entry_id: string) {
    bench.store!.entry$(session_id, entry_id).subscribe((e) => {
      if (e && !bench.seen.has(e.revision)) bench.seen.set(e.revision, now())
    })
  },
  arrivals: () => [...bench.seen.entries()],
  /** The receiving device: when each of these entries first reached its live query (`entry$`). */
  appeared: new Map<string, number>(),
  watchEntries(session_id: string, ids: string[]) {
    for (const id of ids) {
      bench.store!.entry$(session_id, id).subscribe((e) => {
        if (e && !bench.appeared.has(id)) bench.appeared.set(id, now())
      })
    }
  },
  appearances: () => [...bench.appeared.entries()],
  /**
   * The writing device: `ids.length` appends, `gapMs` apart, each with its id and the previous one
   * as parent (one chain, whatever the leaf does meanwhile); when each was issued.
   */
  async appendEach(session_id: string, ids: string[], gapMs: number) {
    const sent: Array<[string, number]> = []
    const done: Array<Promise<unknown>> = []
    for (let i = 0; i < ids.length; i++) {
      sent.push([ids[i], now()])
      done.push(
        bench.store!.append({
          session_id,
          entry_id: ids[i],
          parent_id: i ? ids[i - 1] : null,
          message: user(i),
        }),
      )
      await new Promise((r) => setTimeout(r, gapMs))
    }
    await Promise.all(done)
    await bench.sync!.flush()
    return sent
  },
  async createSession() {
    const { session_id } = await bench.store!.create({ title: 'appends' })
    await bench.sync!.flush()
    return session_id
  },
  /** The writing device: `count` streamed updates, `gapMs` apart; when each was issued. */
  async stream(session_id: string, entry_id: string, count: number, gapMs: number) {
    const sent: Array<[number, number]> = []
    let text = ''
    for (let i = 1; i <= count; i++) {
      text += `token${i} `
      sent.push([i, now()])
      void bench.store!.updateMessage({ session_id, entry_id, content: [{ type: 'text', text }] })
      await new Promise((r) => setTimeout(r, gapMs))
    }
    await bench.store!.flush()
    await bench.sync!.flush()
    return sent
  },
}
;(window as unknown as { bench: typeof bench }).bench = bench
