/** Timing and memory helpers shared by the browser workloads. */

export const now = (): number => performance.now()

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/**
 * The sum of `values` without their `drop` largest: a total that one stalled round (a busy
 * machine's pause, a collection) does not decide, each side of a comparison trimmed alike.
 */
export function trimmedSum(values: readonly number[], drop: number): number {
  const s = [...values].sort((a, b) => a - b)
  return s.slice(0, Math.max(0, s.length - drop)).reduce((a, b) => a + b, 0)
}

export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!
}

let channel: MessageChannel | undefined
const waiting: Array<() => void> = []

/**
 * Yields one macrotask. A MessageChannel round trip, not setTimeout: nested timers are clamped
 * to 4 ms, which would model a stream far slower than a model sends tokens. The channel is made
 * on first use: an open port keeps Node alive, and the runner imports workloads in Node.
 */
export function macrotask(): Promise<void> {
  if (!channel) {
    channel = new MessageChannel()
    channel.port1.onmessage = () => waiting.shift()?.()
  }
  const port = channel.port2
  return new Promise((resolve) => {
    waiting.push(resolve)
    port.postMessage(0)
  })
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Anything with an ES-Observable `subscribe`: RxJS, Dexie's liveQuery, RxDB's `$`. Typed on the
 * (next, error) form because it is the overload all three declare last, which is the one
 * TypeScript infers `T` from.
 */
export interface Subscribable<T> {
  subscribe(next: (value: T) => void, error: (error: unknown) => void): { unsubscribe(): void }
}

/** Subscribes and keeps the latest value; `next(pred)` waits for a value that satisfies `pred`. */
export function watch<T>(source: Subscribable<T>): {
  latest(): T | undefined
  next(pred: (v: T) => boolean): Promise<T>
  stop(): void
} {
  let latest: T | undefined
  let failed: unknown
  let waiter: { pred: (v: T) => boolean; resolve(v: T): void; reject(e: unknown): void } | undefined
  const sub = source.subscribe(
    (v) => {
      latest = v
      if (waiter?.pred(v)) {
        const w = waiter
        waiter = undefined
        w.resolve(v)
      }
    },
    (e) => {
      failed = e
      waiter?.reject(e)
    },
  )
  return {
    latest: () => latest,
    next(pred) {
      if (failed !== undefined) return Promise.reject(failed)
      if (latest !== undefined && pred(latest)) return Promise.resolve(latest)
      return new Promise((resolve, reject) => (waiter = { pred, resolve, reject }))
    },
    stop: () => sub.unsubscribe(),
  }
}

/** The first value a source emits, then unsubscribes. */
export async function firstValue<T>(source: Subscribable<T>): Promise<T> {
  const w = watch(source)
  try {
    return await w.next(() => true)
  } finally {
    w.stop()
  }
}

/**
 * JS heap in use after full collections. Needs Chromium with `--js-flags=--expose-gc` and
 * `--enable-precise-memory-info` (the runner passes both); otherwise the number is coarse.
 */
export async function heapUsed(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('gc() is not exposed: run Chromium with --js-flags=--expose-gc')
  for (let i = 0; i < 3; i++) {
    gc()
    await macrotask()
  }
  return (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize
}

/**
 * The JS heap's peak while some work runs, sampled every `everyMs` until `stop()` (which takes a
 * last sample). `usedJSHeapSize` as it is counts garbage V8 has not collected yet, however much
 * it lets build up; with `live`, a full collection precedes each sample, so the peak is what the
 * page held reachable. A collection stops the page for a while: the next one waits at least
 * four times as long as the last took, so the work sampled still gets most of the page (it is
 * slowed all the same: never time work sampled `live`).
 */
export function heapPeak(everyMs: number, live: boolean): { stop(): number } {
  const gc = (globalThis as { gc?: () => void }).gc
  if (live && !gc) throw new Error('gc() is not exposed: run Chromium with --js-flags=--expose-gc')
  let spent = 0
  const sample = (): number => {
    if (live) {
      const t = performance.now()
      gc!()
      spent = performance.now() - t
    }
    return (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize
  }
  let peak = sample()
  let timer: ReturnType<typeof setTimeout>
  const next = (): void => {
    timer = setTimeout(
      () => {
        peak = Math.max(peak, sample())
        next()
      },
      Math.max(everyMs, spent * 4),
    )
  }
  next()
  return {
    stop() {
      clearTimeout(timer)
      return (peak = Math.max(peak, sample()))
    },
  }
}

/**
 * Counts IndexedDB read-write transactions opened on this page, for every library alike. Install
 * it before the databases open: some libraries keep a bound `transaction` from open time.
 */
export function countWriteTransactions(): { count(): number; stop(): void } {
  const proto = IDBDatabase.prototype
  const original = proto.transaction
  let n = 0
  proto.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    if (args[1] === 'readwrite') n++
    return original.apply(this, args)
  } as IDBDatabase['transaction']
  return { count: () => n, stop: () => void (proto.transaction = original) }
}
