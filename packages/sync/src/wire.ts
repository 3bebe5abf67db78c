import type { PullResponse, PushResponse, SequencedChange, StreamMessage } from './protocol.js'
import { TransportError } from './transport.js'

/**
 * Checks of what a server answers, before the sync engine trusts a number of it. The changes
 * themselves are checked later by core's one validator (`applyReplica`); this is the envelope:
 * sequence numbers, checkpoints and heads that become the device's cursor. A server that sends
 * NaN, a negative or fractional seq, or a page that claims more without moving would otherwise
 * poison the stored checkpoint or spin the pull loop. Any transport's answers pass here, not
 * only the HTTP one's. A malformed answer is a retryable `TransportError`: the loop backs off.
 */

type Json = Record<string, unknown>

const malformed = (what: string): TransportError => new TransportError(`malformed server answer: ${what}`, true)

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

function seqOf(v: unknown, what: string): number {
  if (!isSeq(v)) throw malformed(`${what} must be a non-negative integer`)
  return v
}

function optionalSeq(v: unknown, what: string): number | undefined {
  return v === undefined ? undefined : seqOf(v, what)
}

function epochOf(v: unknown): string | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'string' || v.length > 256) throw malformed('epoch must be a short string')
  return v
}

/** Sequenced changes strictly increasing and above `after`; each change is an object (core checks the rest). */
function changesOf(v: unknown, after: number): SequencedChange[] {
  if (!Array.isArray(v)) throw malformed('changes must be an array')
  let last = after
  for (const [i, c] of v.entries()) {
    if (!isObject(c) || !isObject(c.change)) throw malformed(`changes[${i}] must be { seq, change }`)
    const seq = seqOf(c.seq, `changes[${i}].seq`)
    if (seq <= last) throw malformed(`changes[${i}].seq ${seq} does not follow ${last}`)
    last = seq
  }
  return v as SequencedChange[]
}

/** A pull page for `since`: its checkpoint covers its changes; `more` must move the cursor. */
export function checkPull(v: unknown, since: number): PullResponse {
  if (!isObject(v)) throw malformed('pull answer must be an object')
  const epoch = epochOf(v.epoch)
  if (v.reset === true) return { changes: [], checkpoint: 0, head: optionalSeq(v.head, 'head') ?? 0, more: false, reset: true, epoch }
  const changes = changesOf(v.changes, since)
  const checkpoint = seqOf(v.checkpoint, 'checkpoint')
  const head = seqOf(v.head, 'head')
  if (typeof v.more !== 'boolean') throw malformed('more must be a boolean')
  const lastSeq = changes.length ? changes[changes.length - 1].seq : since
  if (checkpoint < lastSeq) throw malformed(`checkpoint ${checkpoint} is behind the page's last change ${lastSeq}`)
  if (v.more && checkpoint <= since) throw malformed('a page that says more must move the checkpoint')
  return { changes, checkpoint, head, more: v.more, epoch }
}

/** One stream frame. `error` frames (the server refused something) come back as a TransportError to close on. */
export function checkStream(v: unknown): StreamMessage | TransportError {
  if (!isObject(v)) return malformed('stream frame must be an object')
  try {
    switch (v.type) {
      case 'changes': {
        const prev = seqOf(v.prev, 'prev')
        const changes = changesOf(v.changes, prev)
        const checkpoint = optionalSeq(v.checkpoint, 'checkpoint')
        if (checkpoint !== undefined && changes.length && checkpoint < changes[changes.length - 1].seq) throw malformed('checkpoint behind the frame')
        return { type: 'changes', changes, prev, checkpoint, head: seqOf(v.head, 'head') }
      }
      case 'ready':
        return { type: 'ready', checkpoint: optionalSeq(v.checkpoint, 'checkpoint'), head: seqOf(v.head, 'head'), epoch: epochOf(v.epoch) }
      case 'reset':
        return { type: 'reset', checkpoint: 0, head: optionalSeq(v.head, 'head') ?? 0, epoch: epochOf(v.epoch) }
      case 'error': {
        const error = isObject(v.error) ? v.error : {}
        const message = typeof error.message === 'string' ? error.message.slice(0, 500) : 'stream error'
        return new TransportError(`stream: ${message}`, true)
      }
      default:
        return malformed(`unknown stream frame type ${JSON.stringify(String(v.type).slice(0, 40))}`)
    }
  } catch (e) {
    return e as TransportError
  }
}

/** A push answer: one result object per mutation id sent (core's types describe the statuses). */
export function checkPush(v: unknown, ids: readonly number[]): PushResponse {
  if (!isObject(v) || !Array.isArray(v.results)) throw malformed('push answer must be { results: [...] }')
  const sent = new Set(ids)
  for (const [i, r] of v.results.entries()) {
    if (!isObject(r) || !sent.has(r.id as number) || typeof r.status !== 'string') throw malformed(`results[${i}] must be { id, status } for a mutation that was sent`)
    optionalSeq(r.seq, `results[${i}].seq`)
  }
  return v as unknown as PushResponse
}
