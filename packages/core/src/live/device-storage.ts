import {
  type Observable,
  defer,
  distinctUntilChanged,
  from,
  merge,
  of,
  shareReplay,
  switchMap,
  throttleTime,
} from 'rxjs'
import type { Commit } from '../engine/changes.js'

// What the browser grants this site's storage: how much is used, how much may be, and whether
// it is kept under pressure. Safari deletes a site's storage after days without a visit unless
// the app is installed; `persist()` asks the browser to keep it (Chromium grants it to an
// installed or bookmarked app, Firefox asks the user, Safari grants it to an installed app).

/** Usage and quota in bytes, as `navigator.storage.estimate()` gives them; null where unknown. */
export interface StorageUsage {
  readonly usage: number | null
  readonly quota: number | null
  /** Whether the browser keeps this site's storage under pressure; null where it cannot say. */
  readonly persisted: boolean | null
}

const manager = (): StorageManager | undefined =>
  typeof navigator !== 'undefined' ? navigator.storage : undefined

/** Asks the browser to keep this site's storage (`navigator.storage.persist()`); false where it cannot. */
export async function requestPersistence(): Promise<boolean> {
  const m = manager()
  if (!m?.persist) return false
  try {
    return await m.persist()
  } catch {
    // Refused outside a secure context or a top-level document: not kept.
    return false
  }
}

/** One reading of usage, quota and persistence; nulls where the browser does not say. */
export async function storageUsage(): Promise<StorageUsage> {
  const m = manager()
  const [estimate, persisted] = await Promise.all([
    m?.estimate ? m.estimate().catch(() => undefined) : undefined,
    m?.persisted ? m.persisted().catch(() => null) : null,
  ])
  return { usage: estimate?.usage ?? null, quota: estimate?.quota ?? null, persisted }
}

/**
 * Usage and quota as a live query: read on subscribe, then again after commits, at most once
 * per `throttleMs` (the first commit at once, the last of a burst too): an estimate is a
 * round trip to the browser's storage process, and a streamed reply commits every few ms.
 */
export function storageUsage$(commits: Observable<Commit>, throttleMs = 1000): Observable<StorageUsage> {
  const read = (): Observable<StorageUsage> => defer(() => from(storageUsage()))
  return merge(
    of(undefined),
    commits.pipe(throttleTime(throttleMs, undefined, { leading: true, trailing: true })),
  ).pipe(
    switchMap(read),
    distinctUntilChanged((a, b) => a.usage === b.usage && a.quota === b.quota && a.persisted === b.persisted),
    shareReplay({ bufferSize: 1, refCount: true }),
  )
}

const shared = new WeakMap<Observable<Commit>, Observable<StorageUsage>>()
/** `store.storage$`: one `storageUsage$` per store (per commit stream), shared by its subscribers. */
export function storageOf(commits: Observable<Commit>): Observable<StorageUsage> {
  let usage = shared.get(commits)
  if (!usage) shared.set(commits, (usage = storageUsage$(commits)))
  return usage
}
