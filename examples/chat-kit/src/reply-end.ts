import type { AgentMessage, SessionMeta } from '@colloquy/core'
import { INTERRUPTED_REASON, STOPPED_REASON } from '@colloquy/parts'

/** How a reply ended, when it did not simply finish. */
export type ReplyEndState = 'stopped' | 'interrupted' | 'failed'

export interface ReplyEnd {
  state: ReplyEndState
  /** What every app shows on the message: "Stopped", "Interrupted" or "Failed". */
  label: string
  /** Why, for a tooltip (the error's message, or what interrupted it). */
  detail: string
}

const LABELS: Record<ReplyEndState, string> = {
  stopped: 'Stopped',
  interrupted: 'Interrupted',
  failed: 'Failed',
}
const end = (state: ReplyEndState, detail: string): ReplyEnd => ({ state, label: LABELS[state], detail })

/** A reply that failed before it had a message to mark (the request failed at once): said beside the chat. */
export const failedReply = (reason: string): ReplyEnd => end('failed', reason || 'The reply failed')

const stopped = (): ReplyEnd => end('stopped', 'Stopped before the reply finished')

/** A reply that ended in an error: interrupted when its writer tab closed, else failed. */
function failure(reason: string): ReplyEnd {
  // A closed writer tab (however it is noticed) leaves a reason starting with "interrupted".
  if (reason === INTERRUPTED_REASON || /^interrupted\b/i.test(reason))
    return end('interrupted', 'The tab writing this reply closed before it finished')
  return end('failed', reason || 'The reply failed')
}

/** The end of the session's last reply, as the reply writer left it on the session. */
function sessionEnd(meta: SessionMeta): ReplyEnd | null {
  if (meta.status === 'done' && meta.status_reason === STOPPED_REASON) return stopped()
  return meta.status === 'error' ? failure(meta.status_reason ?? '') : null
}

/**
 * How an assistant message ended, for the mark every app shows on it. The message's own stop
 * reason says it (`aborted`, `error` with its `error_message`): the reply writer of
 * `@colloquy/parts` records a stop, a failure or a closed writer tab there, and imported
 * transcripts come with one. The session's status says it for its last reply (`last`: the
 * newest message on the chat's path), first, so that a streaming reply shows none and a
 * reply marked before its message was shows its mark at once. Null for a reply that
 * finished, or one still streaming.
 */
export function replyEnd(
  message: AgentMessage | null | undefined,
  meta: SessionMeta | null | undefined,
  last: boolean,
): ReplyEnd | null {
  if (message?.role !== 'assistant') return null
  if (last && meta) {
    const fromSession = sessionEnd(meta)
    if (fromSession || meta.status === 'working') return fromSession
  }
  if (message.stop_reason === 'aborted') return stopped()
  if (message.stop_reason === 'error') return failure(message.error_message ?? '')
  return null
}

/** A session's status as the sidebar and top bar name it: the same words as the message marks. */
export function statusLabel(meta: Pick<SessionMeta, 'status' | 'status_reason'>): {
  state: string
  label: string
  detail: string
} {
  if (meta.status === 'working')
    return { state: 'working', label: 'Replying', detail: 'A reply is streaming' }
  if (meta.status === 'idle') return { state: 'idle', label: 'Idle', detail: 'No reply yet' }
  const e = sessionEnd(meta as SessionMeta)
  return e
    ? { state: e.state, label: e.label, detail: e.detail }
    : { state: 'done', label: 'Done', detail: 'The last reply finished' }
}
