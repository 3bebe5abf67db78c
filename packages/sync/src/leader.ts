/**
 * Exactly one tab per database replicates: the one holding a Web Lock named after it. The
 * browser releases the lock when that tab closes or crashes, and the next waiting tab takes
 * over at once. Where Web Locks do not exist (Node, tests) this store is always the leader.
 */
const lockManager = (): LockManager | undefined => (globalThis.navigator as Navigator | undefined)?.locks

/** Whether tabs take turns leading: false where there are no Web Locks, and every store leads. */
export const leadersTakeTurns = (): boolean => lockManager() !== undefined

export function lead(name: string, onLead: (stepDown: AbortSignal) => Promise<void>): () => void {
  const stop = new AbortController()
  const locks = lockManager()
  if (!locks) {
    void onLead(stop.signal)
    return () => stop.abort()
  }
  locks
    .request(name, { signal: stop.signal }, () => onLead(stop.signal))
    .catch((e: unknown) => {
      // Aborting the wait for the lock is how a follower stops: not an error.
      if (!(e instanceof DOMException && e.name === 'AbortError')) throw e
    })
  return () => stop.abort()
}
