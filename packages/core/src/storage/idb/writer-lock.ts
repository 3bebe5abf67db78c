/**
 * One writer per IndexedDB database: a Web Lock (`navigator.locks`) held by the context (tab,
 * worker) that last wrote the database, kept until another context asks for it.
 *
 * Why: every commit used to read the session's newest stamp inside its transaction, because
 * another tab may have written since this one last looked. While one context holds this lock
 * without a break, no other context writes the database, so what it verified on disk during the
 * hold is still what the disk holds and its commits need not read it again (`idb-storage.ts`
 * keeps that trust; `lost` clears it).
 *
 * - Every read-write transaction the storage issues runs between `enter` and `leave`. A context
 *   lets go only once the transactions it admitted have finished (their `complete` or `abort`
 *   fired), so a transaction the next holder creates is ordered after all of them.
 * - Handover: a context that must write while another holds the lock queues its request with the
 *   lock manager, makes sure the request is registered (`query` answers after it on the same
 *   channel to the lock manager), then posts `want` on a BroadcastChannel named after the lock.
 *   The holder stops admitting commits, lets the ones admitted finish and lets go, clearing trust
 *   first; the lock manager grants requests in order, so the asker is served before the holder's
 *   own request made after. A `want` that reaches a context still waiting marks it asked too:
 *   once granted it serves the commits waiting then and lets go again. Two contexts streaming at
 *   once thus alternate a batch (or the two a pipeline may hold) each; neither starves.
 * - Never `steal`: a context the lock is stolen from learns it only from its callback's signal,
 *   asynchronously, and could issue a trusted commit in between.
 * - A holder never wedges others: it lets go when asked, on `pagehide` and `freeze` (Page
 *   Lifecycle: a frozen page runs nothing, so it could not answer a `want`), and on `close`. A
 *   crashed or closed page's locks are released by the browser. In Chromium a page holding a
 *   Web Lock is not put in the back/forward cache (WPT `web-locks/bfcache/held`), a page in that
 *   cache whose lock another context requests is evicted (`web-locks/bfcache/contention`), and
 *   Energy Saver does not freeze a page holding a lock another context waits for; letting go on
 *   `pagehide` keeps the page eligible for the cache all the same.
 */
export interface WriterLock {
  /**
   * Admits one read-write transaction: `true` when it may start now (the lock is held and
   * nothing is queued: no await on the hot path), else a promise settled once it may, after
   * which the caller calls `resumed()` first thing. Admissions resume in call order.
   */
  enter(): true | Promise<void>
  resumed(): void
  /** An admitted transaction finished (completed or aborted). */
  leave(): void
  /** True while this context holds the lock: what it verifies on disk now stays true until `lost`. */
  readonly held: boolean
  /** Lets go once the admitted transactions finish and stops listening (the storage closed). */
  close(): void
}

interface Locks {
  request(name: string, callback: () => Promise<void>): Promise<void>
  query(): Promise<unknown>
}

/** How often a context still waiting asks again (a `want` lost to a holder that never saw it). */
const ASK_AGAIN_MS = 250

/**
 * The lock of database `name`, or undefined where `navigator.locks` or BroadcastChannel is
 * missing (older browsers, Node): the storage then checks every commit against disk, as before.
 * `lost` runs synchronously whenever the lock is let go, before any further commit is admitted.
 */
export function writerLock(name: string, lost: () => void): WriterLock | undefined {
  const locks = (globalThis as { navigator?: { locks?: Locks } }).navigator?.locks
  if (!locks || typeof locks.request !== 'function' || typeof BroadcastChannel !== 'function')
    return undefined
  const lockName = `colloquy:writer:${name}`
  let held = false
  /** Another context asked (or this one is leaving): admit nothing new, let go when idle. */
  let asked = false
  let requesting = false
  let inflight = 0
  /** Admissions handed a promise that have not resumed yet: later ones queue behind them. */
  let pending = 0
  let waiters: Array<() => void> = []
  let release: (() => void) | undefined
  let channel: BroadcastChannel | undefined
  let timer: ReturnType<typeof setInterval> | undefined
  /** The lock manager refused (an opaque origin): admit everything, trust nothing. */
  let off = false
  const target = typeof addEventListener === 'function' ? globalThis : undefined

  const letGo = (): void => {
    // Trust goes first: nothing may be admitted on it once another context can write.
    held = false
    lost()
    asked = false
    const r = release
    release = undefined
    r?.()
    if (waiters.length) request()
    else listen(false)
  }
  const idle = (): void => {
    if (held && asked && inflight === 0) letGo()
  }
  const onMessage = (event: MessageEvent): void => {
    if ((event.data as { want?: unknown } | null)?.want !== true) return
    // Waiting ourselves: the asker may be queued behind us; serve what waits now, then let go.
    if (held || requesting) asked = true
    idle()
  }
  const leaving = (): void => {
    if (!held && !requesting) return
    asked = true
    idle()
  }
  let listening = false
  const listen = (on: boolean): void => {
    if (on === listening) return
    listening = on
    if (on) {
      channel ??= new BroadcastChannel(lockName)
      channel.onmessage = onMessage
      target?.addEventListener('pagehide', leaving)
      ;(globalThis as { document?: EventTarget }).document?.addEventListener('freeze', leaving)
    } else {
      channel?.close()
      channel = undefined
      target?.removeEventListener('pagehide', leaving)
      ;(globalThis as { document?: EventTarget }).document?.removeEventListener('freeze', leaving)
    }
  }
  const stopAsking = (): void => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
  }
  const want = (): void => {
    if (requesting) channel?.postMessage({ want: true })
  }
  /** Lets every commit waiting for the lock start, in the order they asked. */
  const admitWaiting = (): void => {
    const ready = waiters
    waiters = []
    inflight += ready.length
    for (const go of ready) go()
  }
  const granted = (): Promise<void> => {
    requesting = false
    stopAsking()
    held = true
    admitWaiting()
    // Asked while waiting: what was admitted just now is this hold's last batch.
    idle()
    return new Promise<void>((resolve) => (release = resolve))
  }
  const request = (): void => {
    if (requesting || held || off) return
    requesting = true
    listen(true)
    locks.request(lockName, granted).catch(() => {
      // Refused (a sandboxed or opaque origin): write without the lock and without trust.
      requesting = false
      stopAsking()
      off = true
      admitWaiting()
    })
    // Asking the holder before our request is registered could let it take the lock back first.
    void locks.query().then(want, want)
    timer = setInterval(want, ASK_AGAIN_MS)
  }

  return {
    enter() {
      if ((held && !asked) || off) {
        inflight++
        if (pending === 0) return true
        // Admitted now, resumed after those admitted before (their continuations are queued).
        pending++
        return Promise.resolve()
      }
      pending++
      const p = new Promise<void>((resolve) => waiters.push(resolve))
      request()
      return p
    },
    resumed() {
      pending--
    },
    leave() {
      inflight--
      idle()
    },
    get held() {
      return held && !off
    },
    close() {
      leaving()
      if (!held && !requesting) listen(false)
    },
  }
}
