// `@colloquy/core/crypto`: encryption at rest and for sync (docs/encryption.md). Web Crypto
// only: PBKDF2-SHA-256 derives a key-encryption key that wraps random AES-GCM data keys; records
// are sealed field by field with associated data binding where each value belongs. Its own entry
// point, so an app that never encrypts loads none of it.
export {
  Keyring,
  parseKeyring,
  type SerializedKeyring,
  type SharedKeyring,
  type WrappedKey,
} from './keyring.js'
export { MIN_ITERATIONS, MAX_ITERATIONS, type KdfParams, type KeySecret } from './kdf.js'
export {
  ENVELOPE_VERSION,
  keyIdOf,
  openBytes,
  openJson,
  sealBytes,
  sealJson,
  type KeySource,
  type SealContext,
} from './envelope.js'
export { MIN_BUCKET, bucketOf } from './padding.js'
export type { EncryptionPolicy } from './policy.js'
export {
  SEALED_METADATA_KEY,
  sealedAttachmentMeta as parseSealedAttachmentMeta,
  sealedEntry as parseSealedEntry,
  sealedMeta as parseSealedMeta,
  type EntryBox,
  type SealedAttachmentMeta,
  type SealedCustomEntry,
  type SealedEntry,
  type SealedField,
  type SealedMessageEntry,
  type SealedMeta,
} from './sealed-records.js'
export { sealEntry, openEntry } from './entry-seal.js'
export { sealMeta, openMeta, olderMetaFields, type SealMetaOptions } from './meta-seal.js'
export {
  sealAttachmentMeta,
  openAttachmentMeta,
  sealAttachmentBytes,
  openAttachmentBytes,
  openAttachmentData,
} from './attachment-seal.js'
export { CHUNKED, CHUNK_BYTES, isChunked, sealChunks } from './attachment-chunks.js'
