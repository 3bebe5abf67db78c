/**
 * Imports `moduleUrl` in a new same-origin iframe and calls its export `fn` with `args`. A new
 * realm has new module instances, so nothing a library keeps in module state (Dexie 4 caches
 * query results per database name at module level) survives from an earlier write or round,
 * as after a page reload; the browser's own caches stay warm for every subject alike. Pass the
 * calling workload's `import.meta.url`.
 */
export async function inFreshRealm<T>(moduleUrl: string, fn: string, ...args: unknown[]): Promise<T> {
  const frame = document.createElement('iframe')
  document.body.append(frame)
  try {
    const realm = frame.contentWindow as unknown as {
      eval(code: string): Promise<Record<string, (...a: unknown[]) => Promise<T>>>
    }
    const mod = await realm.eval(`import(${JSON.stringify(moduleUrl)})`)
    const f = mod[fn]
    if (typeof f !== 'function') throw new Error(`${moduleUrl} has no export ${fn}`)
    return await f(...args)
  } finally {
    frame.remove()
  }
}

/**
 * Calls the export `fn` of the running workload's own file in a newly loaded page (a new tab:
 * new realm, new module instances, a heap of its own), where the runner provides one
 * (Chromium); elsewhere in a fresh realm (`inFreshRealm`). `moduleUrl` is the calling
 * workload's `import.meta.url`; results cross as JSON.
 */
export async function inFreshPage<T>(moduleUrl: string, fn: string, ...args: unknown[]): Promise<T> {
  const open = window.benchFreshPage
  return open ? ((await open(fn, args)) as T) : inFreshRealm<T>(moduleUrl, fn, ...args)
}
