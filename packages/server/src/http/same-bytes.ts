import type { JsonObject, SessionHead, SessionMeta, Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import type { WorkMeter } from '@colloquy/core/wire'

/**
 * Where the caller already holds an attachment with these bytes (by sha256): in the session
 * itself first, then in another of the caller's sessions (a fork's source), those `owns` takes.
 * A unit of `meter` per session and per attachment looked at; past the budget it answers none,
 * and the client sends the bytes, which is always right. Sessions not held in memory are read
 * from the storage a page at a time (`StoreHost.everyHead`), none of them kept.
 */
export async function findSameBytes(
  store: Store,
  owns: (meta: SessionMeta) => boolean,
  /** The metadata filter `owns` tests (the caller's), for a storage that reads by it. */
  filter: JsonObject | undefined,
  session_id: string,
  sha256: string,
  meter: WorkMeter,
): Promise<{ session_id: string; attachment_id: string } | undefined> {
  const host = hostOf(store)
  const look = (
    head: SessionHead | undefined,
  ): { session_id: string; attachment_id: string } | false | undefined => {
    if (!meter.take(1)) return false
    if (!head || !owns(head.meta)) return undefined
    const attachments = head.attachments ?? []
    if (!meter.take(attachments.length)) return false
    const a = attachments.find((x) => x.sha256 === sha256)
    return a && { session_id: head.meta.session_id, attachment_id: a.attachment_id }
  }
  const own = look(await host.read(session_id))
  if (own !== undefined) return own || undefined
  // Held heads are all looked at (a unit each, the caller's or not); read from the storage, only
  // the caller's come back.
  for await (const head of host.allHeld ? host.everyHead() : host.everyHead(owns, filter)) {
    const found = look(head)
    if (found !== undefined) return found || undefined
  }
  return undefined
}
