import { invalid } from '../../model/errors.js'

// The inactivity lock of an encrypted store (`encryption.lockAfter`). "Use" is a call of the
// store's functions by the app, or `store.touch()` (what an app wires to keyboard and pointer
// input); replication, other tabs' commits and live queries updating are not use. Use in any tab
// counts for every tab: a tab idle in the background must not lock the store under the user's
// hands in another one. So a tab tells the others when it was last used, at most once per
// `every` ms (trailing: the newest use of the window is the one told), and a tab locks only when
// `lockAfter` ms have passed since the last use it knows of, its own or another's. The telling
// lags a use by at most `every` (a tenth of `lockAfter`), so a told use always arrives before any
// tab could lock for want of it.

/** The smallest `lockAfter`: below it a store would lock between two keystrokes. */
export const MIN_LOCK_AFTER = 100

/** Checks `encryption.lockAfter`: hostile until then. */
export function checkLockAfter(v: unknown): number | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < MIN_LOCK_AFTER)
    throw invalid(`encryption.lockAfter: expected an integer number of ms, at least ${MIN_LOCK_AFTER}`)
  return v
}

export class IdleLock {
  /** When this tab last knew of a use (its own or told), ms since epoch. */
  private last = Date.now()
  private timer: ReturnType<typeof setTimeout> | undefined
  /** Set while a use of this tab waits to be told. */
  private telling: ReturnType<typeof setTimeout> | undefined
  private readonly every: number

  constructor(
    private readonly lockAfter: number,
    /** Tells the other tabs of a use at `at`. */
    private readonly tell: (at: number) => void,
    /** Locks the store, in every tab. */
    private readonly lock: () => void,
  ) {
    this.every = Math.max(10, Math.floor(lockAfter / 10))
    this.arm()
  }

  /** A use in this tab: called on every store call, so it only notes the time. */
  used(): void {
    this.last = Date.now()
    if (this.telling === undefined && this.timer !== undefined)
      this.telling = setTimeout(() => {
        this.telling = undefined
        if (this.timer !== undefined) this.tell(this.last)
      }, this.every)
  }

  /** A use another tab told of. */
  told(at: unknown): void {
    if (typeof at === 'number' && Number.isFinite(at) && at > this.last) this.last = Math.min(at, Date.now())
  }

  /** (Again) counting from now: the store was opened or unlocked. */
  arm(): void {
    this.last = Date.now()
    this.schedule(this.lockAfter)
  }

  /** Stops counting: the store is locked or closed. */
  stop(): void {
    clearTimeout(this.timer)
    clearTimeout(this.telling)
    this.timer = this.telling = undefined
  }

  // One timer, not one per use: it looks at the last use when it fires and waits again if there was one.
  private schedule(ms: number): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      const idle = Date.now() - this.last
      if (idle < this.lockAfter) return this.schedule(this.lockAfter - idle)
      this.stop()
      this.lock()
    }, ms)
  }
}
