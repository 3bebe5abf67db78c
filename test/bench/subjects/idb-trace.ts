import { now } from './measure.js'

/** When the traced write's read-write transaction and its record writes happened (0: not seen). */
export interface IdbTimes {
  /** The first read-write transaction created since `arm`. */
  created: number
  /** That transaction's `complete` event. */
  complete: number
  /** The first and last `put`/`add` since `arm`. */
  firstWrite: number
  lastWrite: number
  /** Time spent inside those `put`/`add` calls (the value's serialization and its hand-off). */
  inWrites: number
}

/**
 * Wraps IndexedDB's `transaction`, `put` and `add` on their prototypes, for the diagnoses (W2D,
 * W5D), to see where a timed write's time went: `arm()` before it starts, `times` after it
 * settled, `restore()` (in a `finally`) puts the originals back. A workload that measures its
 * target rows never installs it: the wrappers cost every subject a little.
 */
export function traceIdb(): { arm(): void; readonly times: IdbTimes; restore(): void } {
  let armed = false
  const times: IdbTimes = { created: 0, complete: 0, firstWrite: 0, lastWrite: 0, inWrites: 0 }
  const transaction = IDBDatabase.prototype.transaction
  const put = IDBObjectStore.prototype.put
  const add = IDBObjectStore.prototype.add
  IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<typeof transaction>) {
    const t = transaction.apply(this, args)
    if (armed && !times.created && args[1] === 'readwrite') {
      times.created = now()
      t.addEventListener('complete', () => void (times.complete = now()))
    }
    return t
  } as typeof transaction
  const writing = (original: typeof put): typeof put =>
    function (this: IDBObjectStore, ...args: Parameters<typeof put>) {
      const t = armed ? now() : 0
      const r = original.apply(this, args)
      if (armed) {
        times.lastWrite = now()
        times.inWrites += times.lastWrite - t
        if (!times.firstWrite) times.firstWrite = t
      }
      return r
    }
  IDBObjectStore.prototype.put = writing(put)
  IDBObjectStore.prototype.add = writing(add)
  return {
    arm() {
      armed = true
      times.created = times.complete = times.firstWrite = times.lastWrite = times.inWrites = 0
    },
    times,
    restore() {
      armed = false
      IDBDatabase.prototype.transaction = transaction
      IDBObjectStore.prototype.put = put
      IDBObjectStore.prototype.add = add
    },
  }
}
