export { attachmentBlock, createChat, forkChat, THREAD_ROOT, type Chat } from './chat.js'
export { generateReply, replyLock, type GenerateOptions } from './generate.js'
export { LOCAL_MODEL, replySteps, tokensOf, type ModelInput } from './model.js'
export { evaluate, findExpression } from './calc.js'
export { picture } from './picture.js'
export { displayTitle, messageText, textOf, titleFrom } from './text.js'
export {
  loadEndpoint,
  saveEndpoint,
  streamCompletion,
  type Endpoint,
  type CompletionMessage,
  type CompletionDelta,
} from './endpoint.js'
export { failedReply, replyEnd, statusLabel, type ReplyEnd, type ReplyEndState } from './reply-end.js'
export { followNewest } from './follow.js'
export { download, exportChat, exportFormats, fileNameFor, type Exporter } from './export.js'
export { attachFile, attachedMeta, forkAtMessage, isImageFile, type AttachedFile } from './attach.js'
export { isSearchKey } from './search-key.js'
