import { afterEach } from 'vitest'
import { createStore, indexedDbStorage, type Store } from '../src/index.js'

// What the browser tests share: databases of their own, stores ("tabs") opened on them, and
// both closed and deleted after each test so no test sees another's records.

/**
 * Registers the clean-up with `afterEach` and returns `dbName()`, a fresh database name under
 * `prefix`, `storeOn(name)`, a store on that database, and `close(store)`, which closes one
 * before the test ends (a tab gone) so the clean-up does not close it again.
 */
export function idbStores(prefix: string): {
  dbName(): string
  storeOn(name: string): Promise<Store>
  close(store: Store): Promise<void>
} {
  let n = 0
  const open: Store[] = []
  const names: string[] = []
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close()
    for (const name of names.splice(0)) indexedDB.deleteDatabase(name)
  })
  return {
    dbName: () => {
      const name = `${prefix}-${Date.now()}-${++n}`
      names.push(name)
      return name
    },
    storeOn: async (name) => {
      const s = await createStore({ storage: indexedDbStorage({ name }) })
      open.push(s)
      return s
    },
    close: async (s) => {
      await s.close()
      open.splice(open.indexOf(s), 1)
    },
  }
}

export const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

/** The texts of a session's first 500 messages on its active path, as `s` holds them. */
export const texts = async (s: Store, session_id: string): Promise<string[]> =>
  (await s.messages({ session_id, limit: 500 })).messages.map(
    (m) => (m.message!.content as Array<{ text: string }>)[0].text,
  )

/** What a fresh store on `name` reads from disk: texts, count and the path's last entry of one session. */
export const onDisk = async (
  name: string,
  session_id: string,
): Promise<{ texts: string[]; count?: number; leaf?: string }> => {
  const c = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
  try {
    const path = (await c.messages({ session_id, limit: 500 })).messages
    return {
      texts: await texts(c, session_id),
      count: (await c.get({ session_id }))?.meta.message_count,
      leaf: path.at(-1)?.entry_id,
    }
  } finally {
    await c.close()
  }
}

/** Makes database `name` at `version` by hand, as another build of the store would have left it. */
export const createDatabase = (
  name: string,
  version: number,
  upgrade: (db: IDBDatabase, tx: IDBTransaction) => void,
): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const r = indexedDB.open(name, version)
    r.onupgradeneeded = () => upgrade(r.result, r.transaction!)
    r.onsuccess = () => (r.result.close(), resolve())
    r.onerror = () => reject(r.error)
  })
