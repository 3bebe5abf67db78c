/**
 * The raw IndexedDB baseline of a cold start (W9): Colloquy's own database opened at whatever
 * version it has, and an app's first screen read from it with native requests: the newest 50
 * sessions, then the first 50 entries of one chat. The names are Colloquy's layout
 * (packages/core/src/storage/idb/layout.ts); the baseline reads the records, it does not
 * interpret them beyond finding a session's id and its `updated_at`.
 */

/** Where Colloquy keeps its records (layout.ts: SESSIONS, ENTRIES). */
export const LAYOUT = {
  sessions: 'sessions',
  entries: 'entries',
  /**
   * The index that lists sessions newest first, as `{ store, index }`, once the layout has one:
   * set it here to the upgrade's names. Left undefined, the index is looked for (`listIndex`).
   */
  byUpdated: undefined as { store: string; index: string } | undefined,
  /** Layouts 5 and 6: one small record per session in `order` ({ s: session id, u: updated_at, … }), indexed by [u, s]. */
  order: 'order',
}

const request = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })

/** Opens an existing database at its current version (no upgrade, nothing created). */
export function openExisting(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name)
    r.onupgradeneeded = () => {
      r.transaction?.abort()
      reject(new Error(`database ${name} does not exist`))
    }
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
}

const paths = (keyPath: string | string[]): string[] => (Array.isArray(keyPath) ? keyPath : [keyPath])

/**
 * The index listing sessions by `updated_at`: `LAYOUT.byUpdated`, or else the first index of
 * any store whose key path starts with an `updated_at` field (`meta.updated_at`, …) or whose
 * name says `updated`. Reading index definitions costs no I/O: they come with the connection.
 */
export function listIndex(db: IDBDatabase): { store: string; index: string } | undefined {
  if (LAYOUT.byUpdated) return LAYOUT.byUpdated
  const stores = [...db.objectStoreNames]
  if (!stores.length) return undefined
  const tx = db.transaction(stores, 'readonly')
  for (const store of stores) {
    const s = tx.objectStore(store)
    for (const index of [...s.indexNames]) {
      const first = paths(s.index(index).keyPath)[0] ?? ''
      if (/(^|\.)updated_at$/.test(first) || /updated/i.test(index)) return { store, index }
    }
  }
  return undefined
}

/** A record's session id and updated_at, whether it is a head (`{ meta, … }`) or a meta. */
type Listed = {
  session_id?: string
  updated_at?: number
  meta?: { session_id: string; updated_at: number }
  s?: string
}
export const listedId = (r: unknown): string | undefined => {
  const x = r as Listed
  return x.meta?.session_id ?? x.session_id ?? x.s
}
const listedUpdated = (r: unknown): number => {
  const x = r as Listed
  return x.meta?.updated_at ?? x.updated_at ?? 0
}

/**
 * The newest `limit` session records. Through the index when there is one (one `getAll` read
 * backwards where the browser can, else a cursor); without one, every record of the sessions
 * store is read and sorted, which is all a reader of that layout can do.
 */
export async function newestSessions(
  db: IDBDatabase,
  limit: number,
): Promise<{ records: unknown[]; how: string }> {
  const found = listIndex(db)
  if (!found) {
    const all = await request(
      db.transaction(LAYOUT.sessions, 'readonly').objectStore(LAYOUT.sessions).getAll(),
    )
    all.sort((a, b) => listedUpdated(b) - listedUpdated(a))
    return {
      records: all.slice(0, limit),
      how: `no index by updated_at: getAll of '${LAYOUT.sessions}' + sort`,
    }
  }
  // An index on a store of its own (layout 5's `order`) names the sessions: their head records
  // are then read by key in the same transaction, as an app showing titles must.
  const stores = found.store === LAYOUT.sessions ? [found.store] : [found.store, LAYOUT.sessions]
  const tx = db.transaction(stores, 'readonly')
  const index = tx.objectStore(found.store).index(found.index)
  const heads = async (listed: { records: unknown[]; how: string }) => {
    if (found.store === LAYOUT.sessions) return listed
    const sessions = tx.objectStore(LAYOUT.sessions)
    const records = await Promise.all(listed.records.map((r) => request(sessions.get(listedId(r)!))))
    return { records, how: `${listed.how} + ${records.length} gets of '${LAYOUT.sessions}'` }
  }
  const how = `index '${found.store}'.'${found.index}'`
  // Chromium 141+: getAll with options reads backwards in one request.
  if ('getAllRecords' in index) {
    const getAll = index.getAll as unknown as (o: {
      count: number
      direction: 'prev'
    }) => IDBRequest<unknown[]>
    return heads({
      records: await request(getAll.call(index, { count: limit, direction: 'prev' })),
      how: `${how}, getAll backwards`,
    })
  }
  const records: unknown[] = []
  await new Promise<void>((resolve, reject) => {
    const r = index.openCursor(null, 'prev')
    r.onsuccess = () => {
      const c = r.result
      if (!c) return resolve()
      records.push(c.value)
      if (records.length === limit) resolve()
      else c.continue()
    }
    r.onerror = () => reject(r.error)
  })
  return heads({ records, how: `${how}, cursor backwards` })
}

/** The first `limit` entries of a session: entries are keyed [session_id, entry_id] (a marker at [session_id, 0] sorts before them). */
export const firstEntries = (db: IDBDatabase, session_id: string, limit: number): Promise<unknown[]> =>
  request(
    db
      .transaction(LAYOUT.entries, 'readonly')
      .objectStore(LAYOUT.entries)
      .getAll(IDBKeyRange.bound([session_id, ''], [session_id, []]), limit),
  )
