import { filter, firstValueFrom } from 'rxjs'
import { createStore, indexedDbStorage, type Store } from '@colloquy/core'

// One tab of the two-tab test: a store on the shared IndexedDB database of the page's origin.
// The test drives it through `window.tab`.

const DB = 'tabs'
let store: Store

/** This tab's id in the lock manager: the client holding a lock of its own, as `query()` names it. */
async function clientId(): Promise<string | undefined> {
  let id: string | undefined
  await navigator.locks.request(`probe:${Math.random()}`, async (lock) => {
    id = (await navigator.locks.query()).held?.find((l) => l.name === lock?.name)?.clientId
  })
  return id
}
const tab = {
  async open() {
    store = await createStore({ storage: indexedDbStorage({ name: DB }) })
  },
  store: () => store,
  /** A new session's id. */
  create: async (title: string): Promise<string> => (await store.create({ title })).session_id,
  /** True once this tab knows the session (its own commit, another tab's, or the disk). */
  has: async (session_id: string): Promise<boolean> => (await store.get({ session_id })) !== null,
  /** Who holds and who waits for this database's writer lock, as the browser's lock manager says. */
  async lock(): Promise<{ held: number; pending: number; holder?: string }> {
    const name = `colloquy:writer:${DB}`
    const q = await navigator.locks.query()
    const held = (q.held ?? []).filter((l) => l.name === name)
    return {
      held: held.length,
      pending: (q.pending ?? []).filter((l) => l.name === name).length,
      ...(held[0]?.clientId && { holder: held[0].clientId }),
    }
  },
  /**
   * `n` appends one after another, each awaited, as a chat turn loop does; `held` counts the
   * appends after which the lock manager named this tab as the writer lock's holder.
   */
  async appendLoop(session_id: string, n: number, label: string): Promise<{ ids: string[]; held: number }> {
    const me = await clientId()
    const ids: string[] = []
    let held = 0
    for (let i = 0; i < n; i++) {
      const r = await store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: `${label} ${i}` }], timestamp: i },
      })
      ids.push(r.entry_id)
      if ((await tab.lock()).holder === me) held++
    }
    return { ids, held }
  },
  /**
   * The session as this tab's memory holds it: the active leaf, each entry's parent and text,
   * and the path from the leaf to the root.
   */
  async tree(
    session_id: string,
  ): Promise<{ leaf: string | null; entries: Record<string, [string | null, string]>; path: string[] }> {
    const tree = await firstValueFrom(store.tree$(session_id).pipe(filter((t) => t !== null)))
    const entries: Record<string, [string | null, string]> = {}
    for (const [id, e] of tree.entries)
      entries[id] = [
        e.parent_id,
        e.kind === 'message' ? e.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : '',
      ]
    const path: string[] = []
    for (let id = tree.active_leaf; id !== null; id = tree.entries.get(id)?.parent_id ?? null) path.push(id)
    return { leaf: tree.active_leaf, entries, path }
  },
  close: () => store.close(),
  // An encrypted store (test/tabs/encrypted-tabs.test.ts): its own database.
  async openEncrypted(passphrase: string) {
    store = await createStore({
      storage: indexedDbStorage({ name: `${DB}-sealed` }),
      encryption: { passphrase },
    })
  },
  lockStore: () => store.lock(),
  unlockStore: (passphrase: string) => store.unlock(passphrase),
  changePassphrase: (current: string, next: string) => store.changePassphrase(current, next),
  rename: async (session_id: string, title: string) => void (await store.setMeta({ session_id, title })),
  /** Resolves once this tab's store is locked (`true`) or unlocked (`false`). */
  whenLocked: (locked: boolean) => firstValueFrom(store.locked$.pipe(filter((l) => l === locked))),
  /** The session's title, or the code of the error reading it. */
  async title(session_id: string): Promise<string> {
    try {
      return (await store.get({ session_id }))?.meta.title ?? 'absent'
    } catch (e) {
      return (e as { code?: string }).code ?? String(e)
    }
  },
}
;(window as unknown as { tab: typeof tab }).tab = tab
