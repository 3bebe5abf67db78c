import { firstValueFrom, filter } from 'rxjs'
import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import { createSync, openOrCreateKeyring, type Sync, type SyncStatus } from '@colloquy/sync'
import { replicaSnapshot } from '../../support/replica-snapshot.js'
import { rawText } from '../../support/raw-idb.js'

// One device of the end-to-end sync test: a real IndexedDB store in its own browser context,
// replicating with the server. The test drives it through `window.device`. With a passphrase
// (test/sync/sealed-marker.test.ts) the store is encrypted at rest and syncs end-to-end encrypted
// under the keyring the server keeps (the first device to ask creates it); several pages of one
// context are then tabs of one device.

let store: Store
let sync: Sync
/** How a test opens a device beside the defaults. */
interface OpenOptions {
  /** Sync seals with the store's own keys (no keyring of the server's). */
  ownKeys?: boolean
  /** A keyring of the server's for sync, the store kept clear. */
  clearStore?: boolean
  /** Sync is created, not started (the test starts it: `device.sync().start()`). */
  start?: boolean
  maxAttachmentBytes?: number
}

const device = {
  async open(url: string, token: string, passphrase?: string, options: OpenOptions = {}) {
    store = await createStore({
      storage: indexedDbStorage({ name: 'device' }),
      ...(passphrase && !options.clearStore && { encryption: { passphrase } }),
      ...(options.maxAttachmentBytes && { limits: { max_attachment_bytes: options.maxAttachmentBytes } }),
    })
    // The tests take this device offline and keep writing: every operation's code must be here
    // first (this page has no service worker caching the chunks, as an installed app has).
    if (!(await store.prefetched)) throw new Error('the store could not fetch its code')
    const keyring =
      passphrase && !options.ownKeys ? await openOrCreateKeyring({ url, token }, { passphrase }) : undefined
    sync = createSync(store, { url, token, ...(keyring && { keyring }) })
    if (options.start !== false) sync.start()
  },
  /** Every record of the device's database, read raw (for marker scans). */
  raw: () => rawText('device'),
  store: () => store,
  sync: () => sync,
  snapshot: () => replicaSnapshot(store),
  flush: () => sync.flush(),
  status: (state: SyncStatus['state']) => firstValueFrom(sync.status$.pipe(filter((s) => s.state === state))),
  /** Resolves once this tab is the one replicating its database (the leader). */
  leading: () => firstValueFrom(sync.status$.pipe(filter((s) => s.leader))),
  /** Text lengths of one entry as this device's live query saw them. */
  watch(session_id: string, entry_id: string): () => number[] {
    const seen: number[] = []
    const sub = store.entry$(session_id, entry_id).subscribe((e) => {
      if (e?.kind === 'message')
        seen.push(e.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('').length)
    })
    return () => {
      sub.unsubscribe()
      return seen
    }
  },
}
;(window as unknown as { device: typeof device }).device = device
