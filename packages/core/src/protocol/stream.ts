import { epochOf, isObject, malformed, seqOf, sequencedChanges, type Fields } from './envelope.js'
import type { RequestId, StreamMessage, WireError } from './messages.js'
import { checkPushResult } from './push.js'

function wireError(v: unknown): WireError {
  if (
    !isObject(v) ||
    typeof v.code !== 'string' ||
    typeof v.message !== 'string' ||
    (v.id !== undefined && typeof v.id !== 'string')
  ) {
    throw malformed('error must be { code, message }')
  }
  return v as unknown as WireError
}

const echoed = (v: Fields): { id?: RequestId } => ('id' in v ? { id: v.id as RequestId } : {})

/**
 * One frame of the live stream, any of the six the server sends. A frame of another type, or a
 * known type with fields out of the protocol, is refused.
 */
export function checkStreamMessage(v: unknown): StreamMessage {
  if (!isObject(v)) throw malformed('stream frame must be an object')
  switch (v.type) {
    case 'changes': {
      const prev = seqOf(v.prev, 'prev')
      const changes = sequencedChanges(v.changes, prev)
      const checkpoint = seqOf(v.checkpoint, 'checkpoint')
      if (changes.length && checkpoint < changes[changes.length - 1].seq)
        throw malformed('checkpoint behind the frame')
      return { type: 'changes', changes, prev, checkpoint, head: seqOf(v.head, 'head') }
    }
    case 'ready': {
      const epoch = epochOf(v.epoch)
      return {
        type: 'ready',
        checkpoint: seqOf(v.checkpoint, 'checkpoint'),
        head: seqOf(v.head, 'head'),
        ...(epoch !== undefined && { epoch }),
      }
    }
    case 'reset': {
      if (v.checkpoint !== 0) throw malformed('a reset is at checkpoint 0')
      const epoch = epochOf(v.epoch)
      return {
        type: 'reset',
        checkpoint: 0,
        head: seqOf(v.head, 'head'),
        ...(epoch !== undefined && { epoch }),
      }
    }
    case 'pushed': {
      if (!Array.isArray(v.results)) throw malformed('pushed must carry results')
      const results = v.results.map((r, i) => checkPushResult(r, `results[${i}]`))
      return { type: 'pushed', id: v.id as RequestId, results }
    }
    case 'pong':
      return { type: 'pong', id: v.id as RequestId }
    case 'error': {
      const error = wireError(v.error)
      const wait = v.retry_after_ms
      if (wait !== undefined && !(typeof wait === 'number' && Number.isFinite(wait) && wait >= 0))
        throw malformed('retry_after_ms must be a non-negative number')
      return { type: 'error', ...echoed(v), error, ...(wait !== undefined && { retry_after_ms: wait }) }
    }
    default:
      throw malformed(`unknown stream frame type ${JSON.stringify(String(v.type).slice(0, 40))}`)
  }
}
