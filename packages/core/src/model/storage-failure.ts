import { SessionError } from './errors.js'

const KEPT: ReadonlySet<string> = new Set(['session/storage', 'session/integrity', 'session/locked'])

/**
 * A write the storage refused, as the caller sees it (`what`: "write failed", "import failed").
 * The transaction was aborted whole, so nothing of it was written. A full quota gets its own
 * reason, so an app can say so and offer to free space (`store.storage$` shows usage and quota).
 */
export function storageFailure(what: string, cause: unknown): SessionError {
  // An encrypted store's storage refusing a record (`session/integrity`) or its keys being gone
  // (`session/locked`) says why itself.
  if (cause instanceof SessionError && KEPT.has(cause.code)) return cause
  // By name: a DOMException in most engines, a QuotaExceededError class of its own in newer ones.
  if (cause instanceof Error && cause.name === 'QuotaExceededError') {
    const detail = cause.message ? `${cause.name}: ${cause.message}` : cause.name
    return new SessionError(
      'session/storage',
      `quota exceeded: the browser has no more room for this site's data; nothing of this write was kept (${detail})`,
      { cause },
    )
  }
  return new SessionError(
    'session/storage',
    `${what}: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`,
    { cause },
  )
}
