/**
 * What every hook returns: a discriminated union, so `data` is typed exactly when it is there.
 * `loading` is the state of server rendering, of a provider without a store and of a session
 * whose entries are still being read; `null` data means "does not exist", never "not yet".
 */
export type LiveState<T> =
  | { readonly status: 'loading'; readonly data: undefined; readonly error: undefined }
  | { readonly status: 'ready'; readonly data: T; readonly error: undefined }
  | { readonly status: 'error'; readonly data: undefined; readonly error: unknown }

/** One shared object, so a loading snapshot is identical across renders and hooks. */
export const LOADING: LiveState<never> = Object.freeze({
  status: 'loading',
  data: undefined,
  error: undefined,
})

export const ready = <T>(data: T): LiveState<T> => Object.freeze({ status: 'ready', data, error: undefined })

export const failed = (error: unknown): LiveState<never> =>
  Object.freeze({ status: 'error', data: undefined, error })
