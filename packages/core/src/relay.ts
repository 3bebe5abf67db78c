import type { ChangePayload, Commit } from './changes.js'
import type { Engine } from './engine.js'
import type { EventEnvelope } from './model.js'

interface RelayMessage {
  readonly payload: ChangePayload
  readonly events: readonly EventEnvelope[]
}

/** The writes behind a commit's changes, minus what was merely re-read from disk. */
export function payloadOf(commit: Commit): ChangePayload {
  const deleted: string[] = []
  const heads: ChangePayload['heads'][number][] = []
  const entries: Array<readonly [string, ChangePayload['entries'][number][1]]> = []
  for (const c of commit.changes.values()) {
    if (c.reloaded) continue
    if (c.head === null) deleted.push(c.session_id)
    else if (c.head) heads.push(c.head)
    if (c.added.length || c.updated.length) entries.push([c.session_id, [...c.added, ...c.updated]])
  }
  return { deleted, heads, entries }
}

/**
 * Multi-tab relay: every commit this store makes is posted on a BroadcastChannel named after the
 * database, and commits posted by other tabs are folded in and re-emitted here, so events and
 * live queries in every tab see every tab's writes. Returns a function that stops it.
 */
export function startRelay(engine: Engine, channelName: string): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => {}
  const channel = new BroadcastChannel(channelName)
  channel.onmessage = (event: MessageEvent<RelayMessage>) => {
    engine.applyExternal('tab', event.data.payload, event.data.events)
  }
  const sub = engine.commits.subscribe((commit) => {
    // What this tab wrote, itself or by applying a server's changes; never what it was relayed.
    if (commit.source === 'tab') return
    const payload = payloadOf(commit)
    if (!payload.deleted.length && !payload.heads.length && !payload.entries.length && !commit.events.length) return
    channel.postMessage({ payload, events: commit.events } satisfies RelayMessage)
  })
  return () => {
    sub.unsubscribe()
    channel.close()
  }
}
