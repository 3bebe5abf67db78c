import { SessionError } from '../model/errors.js'

// Code fetched on first use (operations, live queries, imports…): one fetch, however many ask.

export interface Once<T> {
  /** Set once fetched. */
  value?: T
  /** Fetches it (once; a failure is tried again on the next call); undefined once it is here. */
  load(): Promise<T> | undefined
}

export function once<T>(fetch: () => Promise<T>): Once<T> {
  let fetching: Promise<T> | undefined
  const it: Once<T> = {
    load: () =>
      it.value
        ? undefined
        : (fetching ??= fetch().then(
            (value) => (it.value = value),
            (cause: unknown) => {
              fetching = undefined
              throw new SessionError('session/storage', `loading code failed: ${String(cause)}`, { cause })
            },
          )),
  }
  return it
}
