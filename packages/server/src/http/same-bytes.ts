import type { Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import type { WorkMeter } from '@colloquy/core/wire'

/**
 * Where the caller already holds an attachment with these bytes (by sha256): in the session
 * itself first, then in another of the caller's sessions (a fork's source). A unit of `meter`
 * per session and per attachment looked at; past the budget it answers none, and the client
 * sends the bytes, which is always right.
 */
export function findSameBytes(
  store: Store,
  visible: (session_id: string) => boolean,
  session_id: string,
  sha256: string,
  meter: WorkMeter,
): { session_id: string; attachment_id: string } | undefined {
  const host = hostOf(store)
  for (const head of [host.head(session_id), ...host.heads()]) {
    if (!meter.take(1)) return undefined
    if (!head || !visible(head.meta.session_id)) continue
    const id = head.meta.session_id
    const attachments = head.attachments ?? []
    if (!meter.take(attachments.length)) return undefined
    const a = attachments.find((x) => x.sha256 === sha256)
    if (a) return { session_id: id, attachment_id: a.attachment_id }
  }
  return undefined
}
