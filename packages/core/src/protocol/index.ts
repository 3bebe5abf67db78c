// `@colloquy/core/protocol`: the sync protocol between `@colloquy/sync` and `@colloquy/server`,
// one declaration of every push, pull and stream message and the check of each, for both sides.
export type {
  MutationId,
  PushMutation,
  PushRequest,
  PushResult,
  PushResponse,
  SequencedChange,
  PullResponse,
  RequestId,
  WireError,
  StreamMessage,
  StreamRequest,
} from './messages.js'
export {
  checkPushRequest,
  checkPushEnvelope,
  checkPushMutation,
  checkPushResponse,
  type CheckedPush,
} from './push.js'
export { checkPullResponse } from './pull.js'
export { checkStreamMessage } from './stream.js'
export { parentsFirst, type Linked } from './parents-first.js'
