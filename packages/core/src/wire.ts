// `@colloquy/core/wire`: checks for what arrives from outside the store (requests, stored
// records, imports) and the byte codecs, for transports, servers and importers.
export { parseRequest } from './validation/requests.js'
export { LIMITS, isValidId, isWellFormed } from './validation/limits.js'
export { checkMime, isValidMime, mimeOrOctet } from './validation/mime.js'
export { parseEventConfig } from './live/events.js'
export { parseAgentMessage } from './validation/schemas.js'
export {
  parseSessionEntry,
  parseSessionMeta,
  parseAttachmentMeta,
  parseStoredEntry,
  parseStoredMeta,
  parseStoredAttachmentMeta,
} from './validation/records.js'
export { isSealedRecord } from './validation/sealed-records.js'
export { checkImport } from './import/import.js'
export {
  mentionPage,
  mentionQueryTooCostly,
  searchMentionPage,
  searchMentions,
  MENTION_WORK_BUDGET,
} from './ops/mention.js'
export { LIST_WORK_BUDGET, WorkMeter } from './ops/work.js'
export { collectAttachmentIds } from './ops/attachments.js'
export { concatBytes, decodeBase64, encodeBase64, sha256Hex } from './util/bytes.js'
