import type { Storage } from '../storage/seam.js'

// An incremental import writes a session's entries before its head, so they stay invisible
// (nothing reads entries of a session without a head). Two things must hold around that:
// only one import writes a session id at a time (two tabs importing the same file must not
// mix their chunks), and an import that died (a closed tab, a crash) leaves nothing behind
// once another import starts. The first is a lock held for the whole import: a Web Lock where
// the platform has them (shared by every tab of the origin), else one held in this process.
// The second is a marker record in the `kv` side store, written with the first chunk and
// removed with the head: a marker whose lock nobody holds belongs to a dead import.

const KV = 'kv'
const PREFIX = 'import:'
const markerKey = (session_id: string): string => `${PREFIX}${session_id}`

/** Imports running in this process, per storage (the fallback where Web Locks are missing). */
const running = new WeakMap<Storage, Set<string>>()

type Release = () => void

const webLocks = (): LockManager | undefined =>
  typeof navigator !== 'undefined' ? (navigator as Navigator & { locks?: LockManager }).locks : undefined

/** Takes the lock of `session_id` on `storage` if nobody holds it; returns its release or undefined. */
async function tryLock(storage: Storage, session_id: string): Promise<Release | undefined> {
  const locks = webLocks()
  if (!locks) {
    const held = running.get(storage) ?? running.set(storage, new Set()).get(storage)!
    if (held.has(session_id)) return undefined
    held.add(session_id)
    return () => void held.delete(session_id)
  }
  return new Promise<Release | undefined>((resolve, reject) => {
    locks
      .request(`colloquy:import:${storage.name}:${session_id}`, { ifAvailable: true }, (lock) => {
        if (!lock) return resolve(undefined)
        // The lock lasts as long as this promise: until the import calls its release.
        return new Promise<void>((release) => resolve(release))
      })
      .catch(reject)
  })
}

/** The writes that drop an abandoned import: its entries (when no head made them a session) and its marker. */
async function dropAbandoned(storage: Storage, session_id: string): Promise<void> {
  await storage.transact(async (reader) => ({
    deleted: (await reader.head(session_id)) ? new Set<string>() : new Set([session_id]),
    heads: new Map(),
    entries: new Map(),
    side: storage.sideRecords ? [{ store: KV, key: markerKey(session_id), value: undefined }] : [],
  }))
}

/** One import's hold on its session id: see the top of this file. */
export interface ImportClaim {
  /** The marker write for the first chunk's transaction (none when the storage keeps no side records). */
  readonly marker: readonly { store: string; key: string; value: unknown }[]
  /** Drops what this import wrote (entries without a head, the marker) and lets go of the id. */
  abandon(): Promise<void>
  /** After the head is on disk: removes the marker and lets go of the id. */
  finish(): Promise<void>
}

/**
 * Claims `session_id` for an import, or returns undefined when another import holds it. Every
 * import left behind by a dead one (on any session id) is dropped first, this id's included,
 * so a re-import after a crash starts clean.
 */
export async function claimImport(
  storage: Storage,
  session_id: string,
  now: number,
): Promise<ImportClaim | undefined> {
  const release = await tryLock(storage, session_id)
  if (!release) return undefined
  try {
    if (storage.sideRecords) {
      for (const { key } of await storage.sideRecords(KV)) {
        if (typeof key !== 'string' || !key.startsWith(PREFIX)) continue
        const id = key.slice(PREFIX.length)
        if (id === session_id) {
          await dropAbandoned(storage, id)
          continue
        }
        const other = await tryLock(storage, id)
        if (!other) continue
        try {
          await dropAbandoned(storage, id)
        } finally {
          other()
        }
      }
    }
  } catch (e) {
    release()
    throw e
  }
  let released = false
  const letGo = (): void => {
    if (!released) release()
    released = true
  }
  return {
    marker: storage.sideRecords
      ? [{ store: KV, key: markerKey(session_id), value: { started_at: now } }]
      : [],
    async abandon() {
      try {
        await dropAbandoned(storage, session_id)
      } catch {
        // The store is failing: the entries stay invisible, and the marker has the next import drop them.
      } finally {
        letGo()
      }
    },
    async finish() {
      try {
        if (storage.sideRecords)
          await storage.transact(async () => ({
            deleted: new Set(),
            heads: new Map(),
            entries: new Map(),
            side: [{ store: KV, key: markerKey(session_id), value: undefined }],
          }))
      } catch {
        // A marker left beside a head is only dropped by the next import (the head keeps the entries).
      } finally {
        letGo()
      }
    },
  }
}
