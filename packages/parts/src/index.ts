export {
  blocksToParts,
  textOfParts,
  textOf,
  titleFrom,
  ATTACHMENT_SCHEME,
  type NeutralPart,
  type TextPart,
  type ReasoningPart,
  type ToolPart,
  type FilePart,
  type ExtraPart,
} from './parts.js'
export { foldTree, splitParts, entriesOf, type ChatNode, type ChatTree, type SidecarData } from './nodes.js'
export {
  startReply,
  stopReply,
  recoverInterrupted,
  createThread,
  THREAD_ROOT,
  replyLock,
  isInterrupted,
  INTERRUPTED_REASON,
  STOPPED_REASON,
  replyEnding,
  type ReplyStart,
  type ReplyOutcome,
  type ReplyWriter,
  type ReplyEnding,
} from './reply.js'
export { watchReplies, awaitReplyEnd } from './reply-watch.js'
export { ownReply, disownReply, ownsReply } from './reply-owner.js'
