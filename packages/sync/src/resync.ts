import type { ReplicaChange, SessionMeta, SideWrite } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { parentsFirst } from '@colloquy/core/protocol'
import { CHECKPOINT, EPOCH, RESYNC } from './checkpoint.js'
import { queued } from './outbox.js'
import { KV, closeStream, serially, type Replication, type Resync } from './state.js'

/**
 * The server cannot continue from this checkpoint (it forgot that far back, it is another
 * database, or it is behind us: restored from a backup). Start over from 0, keeping the
 * outbox; what the server turns out to lack is pushed again once the pull is through.
 */
export function beginResync(s: Replication, next: string | undefined): Promise<void> {
  closeStream(s)
  const run = async (): Promise<void> => {
    // A second reset (the stream's and a pull's) restarts the pull, not the local snapshot.
    const leaves = s.resync?.leaves ?? (await localLeaves(s))
    s.epoch = next
    // The log starts over: what was held comes again, positions answered before mean nothing.
    s.generation++
    s.held = []
    s.landed.clear()
    s.resync = { sessions: new Set(), entries: new Set(), leaves }
    s.head = 0
    const side: SideWrite[] = [
      { store: KV, key: CHECKPOINT, value: 0 },
      { store: KV, key: EPOCH, value: next },
      // The local leaves as they were, kept until the resync ends (a restart resumes it).
      { store: KV, key: RESYNC, value: [...leaves] },
    ]
    await s.store.applyReplica([], { policy: 'pull', side })
    s.checkpoint = 0
  }
  return serially(s, run)
}

/** The local active leaves before a resync's pull moves them to the server's. */
async function localLeaves(s: Replication): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  // Every session, loaded or not (a store over IndexedDB holds only a working set of heads).
  for await (const head of hostOf(s.store).everyHead())
    if (head.leaf) out.set(head.meta.session_id, head.leaf)
  return out
}

/** Notes what the server holds, from the changes of a resync's pull. */
export function noteServer(resync: Resync, c: ReplicaChange): void {
  if (c.type === 'meta') resync.sessions.add(c.meta.session_id)
  else if (c.type === 'entry') {
    resync.sessions.add(c.session_id)
    resync.entries.add(`${c.session_id}\u0000${c.entry.id}`)
  } else if (c.type === 'delete') resync.sessions.delete(c.session_id)
}

/** Queues what this store holds and the server did not send: sessions and entries it lost. */
export async function finishResync(s: Replication): Promise<void> {
  const seen = s.resync!
  const { store } = s
  const host = hostOf(store)
  const side: SideWrite[] = []
  const all: SessionMeta[] = []
  for await (const head of host.everyHead()) all.push(head.meta)
  for (const meta of all) {
    const id = meta.session_id
    const known = seen.sessions.has(id)
    await host.load(id)
    const held = host.head(id)
    if (!held) continue
    if (!known) side.push(queued({ type: 'meta', meta, create: true }, s.now()))
    for (const entry of parentsFirst(host.entries(id)?.values() ?? [])) {
      if (!known || !seen.entries.has(`${id}\u0000${entry.id}`))
        side.push(queued({ type: 'entry', session_id: id, entry, base_revision: null }, s.now()))
    }
    // A leaf on an entry the server lacked is newer than the server's: it goes back too.
    const leaf = known ? seen.leaves.get(id) : held.leaf
    if (leaf && (!known || !seen.entries.has(`${id}\u0000${leaf}`)))
      side.push(queued({ type: 'leaf', session_id: id, entry_id: leaf }, s.now()))
  }
  side.push({ store: KV, key: RESYNC, value: undefined })
  await store.applyReplica([], { policy: 'pull', side })
  s.resync = undefined
  // Push what was queued before going live.
  s.dirty = true
}
