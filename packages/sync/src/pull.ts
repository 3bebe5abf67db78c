import { parseReplicaChange } from '@colloquy/core/replica'
import type { SequencedChange } from '@colloquy/core/protocol'
import { changeSession, type ReplicaChange } from '@colloquy/core'
import { checkPull } from './answers.js'
import { cursorWrites } from './checkpoint.js'
import { withoutPending } from './echoes.js'
import { keyed } from './outbox.js'
import { beginResync, finishResync, noteServer } from './resync.js'
import { outbox, serially, type Replication } from './state.js'

/** Applies server changes after the checkpoint, and moves the checkpoint, in one transaction. */
export function apply(s: Replication, changes: readonly SequencedChange[], to: number): Promise<void> {
  const run = async (): Promise<void> => {
    const fresh = changes.filter((c) => c.seq > s.checkpoint)
    const next = Math.max(s.checkpoint, to)
    if (!fresh.length && next === s.checkpoint) return
    const live: SequencedChange[] = []
    // Taken over once written: a failed apply leaves `held` as it was.
    let hold = s.held.slice()
    for (const sc of fresh) {
      const c = sc.change
      const k = keyed(c)
      if (c.type === 'delete') hold = hold.filter((h) => changeSession(h.change) !== c.session_id)
      if (k === undefined) live.push(sc)
      // Older than a change of ours the server already answered for: superseded.
      else if (sc.seq < (s.landed.get(k) ?? 0)) continue
      else if (s.holding.has(k)) {
        // Checked now as applying it would (core's one validator): a hostile change fails
        // this apply with the checkpoint untouched, rather than being kept past it.
        hold.push({ seq: sc.seq, change: parseReplicaChange(c, `changes[seq ${sc.seq}]`) })
      } else live.push(sc)
    }
    const list = withoutPending(s, live, live.length ? await outbox(s) : [])
    const held = s.options.eagerAttachments ? await heldAttachments(s, list) : undefined
    await s.store.applyReplica(list, { policy: 'pull', side: cursorWrites(next, s.epoch) })
    s.held = hold
    s.checkpoint = next
    for (const [k, seq] of s.landed) if (seq <= s.checkpoint && !s.holding.has(k)) s.landed.delete(k)
    // Read once now, so the bytes are here before the device goes offline; `flush()` waits for
    // them. Only attachments new here: a pulled list names every attachment of its session, and
    // reading the others again would open them all on an encrypted store. A failed download is
    // not an error of the pull: the first read tries again.
    if (held)
      for (const c of list)
        for (const [sid, aid] of pulledAttachments(c)) {
          if (held.has(JSON.stringify([sid, aid]))) continue
          const read = s.store.getAttachmentBlob(sid, aid).catch(() => {})
          s.fetching.add(read)
          void read.finally(() => s.fetching.delete(read))
        }
  }
  return serially(s, run)
}

/** Pulls page after page from the checkpoint until the server says there is no more. */
export async function pullAll(s: Replication, signal: AbortSignal): Promise<void> {
  for (;;) {
    const page = checkPull(await s.transport.pull(s.checkpoint, s.pullLimit, s.epoch), s.checkpoint)
    if (page.reset) {
      await beginResync(s, page.epoch)
      continue
    }
    if (page.epoch !== undefined) s.epoch = page.epoch
    s.head = Math.max(s.head, page.head)
    if (s.resync) for (const c of page.changes) noteServer(s.resync, c.change)
    await apply(s, page.changes, page.checkpoint)
    if (signal.aborted) return
    if (!page.more) break
  }
  if (s.resync) await finishResync(s)
}

/**
 * The attachments a pulled change names, as `[session, attachment]`: one put (a server's log) or a
 * session's whole list. Every change type is named, so a type added later that brings
 * attachments does not compile until it is answered here (the list was once missed).
 */
function pulledAttachments(c: ReplicaChange): ReadonlyArray<readonly [string, string]> {
  switch (c.type) {
    case 'attachment':
      return [[c.session_id, c.attachment.attachment_id]]
    case 'attachments':
      return c.attachments.map((a) => [c.session_id, a.attachment_id] as const)
    case 'meta':
    case 'entry':
    case 'leaf':
    case 'delete':
    case 'detach':
      return []
    default:
      return c satisfies never
  }
}

/** The attachments this device lists already in the sessions whose attachments a pull names. */
async function heldAttachments(s: Replication, list: readonly ReplicaChange[]): Promise<Set<string>> {
  const held = new Set<string>()
  for (const sid of new Set(list.flatMap((c) => pulledAttachments(c).map(([sid]) => sid))))
    try {
      for (const a of (await s.store.listAttachments({ session_id: sid })).attachments)
        held.add(JSON.stringify([sid, a.attachment_id]))
    } catch {
      // A session new here lists nothing yet.
    }
  return held
}
