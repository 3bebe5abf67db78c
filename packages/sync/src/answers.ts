import {
  checkPullResponse,
  checkPushResponse,
  checkStreamMessage,
  type MutationId,
  type PullResponse,
  type PushResponse,
  type StreamMessage,
} from '@colloquy/core/protocol'
import { MAX_RETRY_AFTER_MS, TransportError } from './transport.js'

/**
 * What a server answers, checked by the protocol's one check (`@colloquy/core/protocol`, the
 * server's own) before a number of it is trusted; any transport's answers pass here, not only the
 * HTTP one's. A refusal is a retryable `TransportError`: the loop backs off with nothing applied
 * and the checkpoint untouched. The changes inside are checked later by core's validator
 * (`applyReplica`).
 */
const retryable = (e: unknown): TransportError =>
  new TransportError(e instanceof Error ? e.message : String(e), true)

/** A pull page for `since`. */
export function checkPull(v: unknown, since: number): PullResponse {
  try {
    return checkPullResponse(v, since)
  } catch (e) {
    throw retryable(e)
  }
}

/** A push answer for the mutations `ids`: one result each, in order. */
export function checkPush(v: unknown, ids: readonly MutationId[]): PushResponse {
  try {
    return checkPushResponse(v, ids)
  } catch (e) {
    throw retryable(e)
  }
}

/**
 * One stream frame. A malformed one, and an `error` frame (the server refused something), come
 * back as a TransportError to close on.
 */
export function checkStream(v: unknown): Exclude<StreamMessage, { type: 'error' }> | TransportError {
  let m: StreamMessage
  try {
    m = checkStreamMessage(v)
  } catch (e) {
    return retryable(e)
  }
  return m.type === 'error'
    ? new TransportError(
        `stream: ${m.error.message.slice(0, 500)}`,
        true,
        undefined,
        m.retry_after_ms === undefined ? undefined : Math.min(m.retry_after_ms, MAX_RETRY_AFTER_MS),
      )
    : m
}
