import type { EnginePage as Page } from '../support/engines.js'

// Driving a page of test/sync/page (one tab of a device) from a test: its `window.device`.

/** Calls `window.device[fn](...params)` in the page. */
export const call = <T>(page: Page, fn: string, ...params: unknown[]): Promise<T> =>
  page.evaluate(
    ([f, p]) =>
      (window as never as Record<string, Record<string, (...a: unknown[]) => unknown>>).device[f as string](
        ...(p as unknown[]),
      ),
    [fn, params] as const,
  ) as Promise<T>

/** Runs `body` in the page with the device's store as `s`. */
export const inStore = <T>(page: Page, body: string, arg?: unknown): Promise<T> =>
  page.evaluate(
    ([b, a]) =>
      new Function('s', 'arg', `return (async () => { ${b} })()`)(
        (window as never as { device: { store(): unknown } }).device.store(),
        a,
      ),
    [body, arg] as const,
  ) as Promise<T>
