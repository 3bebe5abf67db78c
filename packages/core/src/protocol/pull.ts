import { epochOf, isObject, malformed, seqOf, sequencedChanges } from './envelope.js'
import type { PullResponse } from './messages.js'

/**
 * A pull page for `since`: its changes follow `since` in order, its checkpoint covers them, a
 * page that says `more` moves the cursor. A reset page is empty at checkpoint 0.
 */
export function checkPullResponse(v: unknown, since: number): PullResponse {
  if (!isObject(v)) throw malformed('pull answer must be an object')
  const epoch = epochOf(v.epoch)
  const head = seqOf(v.head, 'head')
  if (typeof v.more !== 'boolean') throw malformed('more must be a boolean')
  if (v.reset !== undefined && typeof v.reset !== 'boolean') throw malformed('reset must be a boolean')
  if (v.reset === true) {
    if (v.checkpoint !== 0 || !Array.isArray(v.changes) || v.changes.length)
      throw malformed('a reset page is empty at checkpoint 0')
    return {
      changes: [],
      checkpoint: 0,
      head,
      more: v.more,
      reset: true,
      ...(epoch !== undefined && { epoch }),
    }
  }
  const changes = sequencedChanges(v.changes, since)
  const checkpoint = seqOf(v.checkpoint, 'checkpoint')
  const lastSeq = changes.length ? changes[changes.length - 1].seq : since
  if (checkpoint < lastSeq)
    throw malformed(`checkpoint ${checkpoint} is behind the page's last change ${lastSeq}`)
  if (v.more && checkpoint <= since) throw malformed('a page that says more must move the checkpoint')
  return { changes, checkpoint, head, more: v.more, ...(epoch !== undefined && { epoch }) }
}
