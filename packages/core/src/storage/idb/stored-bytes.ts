// How attachment bytes are stored: a Blob, or, where the engine refuses Blobs, their bytes and
// type (see `idb-blobs.ts`, the write side, fetched with the storage's write half). Reading
// them back is all an app needs at start.

/** A record of the attachment store: a Blob, or its bytes and type where Blobs are refused. */
export type StoredBytes = Blob | { readonly bytes: ArrayBuffer; readonly type: string }

/** A record of the attachment store as the Blob it stands for. */
export const fromStored = (v: StoredBytes | undefined): Blob | undefined =>
  v === undefined || v instanceof Blob ? v : new Blob([v.bytes], { type: v.type })
