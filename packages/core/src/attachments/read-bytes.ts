/**
 * The bytes of an attachment's Blob already read whole before its commit (a put reads a File
 * once, to hash it): a storage that must read the Blob again to store it (an encrypted one
 * seals it) takes them from here instead. Weak: they go with the Blob.
 */
export const readBytes = new WeakMap<Blob, Uint8Array>()
