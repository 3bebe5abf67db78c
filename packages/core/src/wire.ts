// `@colloquy/core/wire`: checks for what arrives from outside the store (requests, stored
// records, imports) and the byte codecs, for transports, servers and importers.
export { parseRequest } from './requests.js'
export { parseAgentMessage } from './schemas.js'
export { parseSessionEntry, parseSessionMeta, parseAttachmentMeta } from './records.js'
export { checkImport } from './import.js'
export { searchMentions, MENTION_WORK_BUDGET } from './ops/mention.js'
export { LIST_WORK_BUDGET, WorkMeter } from './work.js'
export { collectAttachmentIds } from './ops/attachments.js'
export { decodeBase64, encodeBase64, sha256Hex } from './bytes.js'
