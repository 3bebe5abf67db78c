import { firstValueFrom, filter } from 'rxjs'
import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import { createSync, type Sync, type SyncStatus } from '@colloquy/sync'

// One device of the end-to-end sync test: a real IndexedDB store in its own browser context,
// replicating with the server. The test drives it through `window.device`.

export interface Snapshot {
  [session_id: string]: { meta: Record<string, unknown>; leaf: string | null; entries: unknown[] }
}

async function snapshot(store: Store): Promise<Snapshot> {
  const out: Snapshot = {}
  for (const meta of (await store.list({ limit: 500, order: 'created_asc' })).sessions) {
    await store.engine.ensureLoaded(meta.session_id)
    const s = store.engine.state.sessions.get(meta.session_id)!
    const { updated_at: _u, ...rest } = meta
    out[meta.session_id] = { meta: rest, leaf: s.head.leaf, entries: [...s.entries!.values()].sort((a, b) => (a.id < b.id ? -1 : 1)) }
  }
  return out
}

let store: Store
let sync: Sync
const device = {
  async open(url: string, token: string) {
    store = await createStore({ storage: indexedDbStorage({ name: 'device' }) })
    sync = createSync(store, { url, token })
    sync.start()
  },
  store: () => store,
  sync: () => sync,
  snapshot: () => snapshot(store),
  flush: () => sync.flush(),
  status: (state: SyncStatus['state']) => firstValueFrom(sync.status$.pipe(filter((s) => s.state === state))),
  /** Text lengths of one entry as this device's live query saw them. */
  watch(session_id: string, entry_id: string): () => number[] {
    const seen: number[] = []
    const sub = store.entry$(session_id, entry_id).subscribe((e) => {
      if (e?.kind === 'message') seen.push(e.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('').length)
    })
    return () => {
      sub.unsubscribe()
      return seen
    }
  },
}
;(window as unknown as { device: typeof device }).device = device
