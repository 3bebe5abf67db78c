import type { SessionEntry, SessionMeta, Store } from '@colloquy/core'

export interface ReplicaSession {
  meta: SessionMeta
  leaf: string | null
  entries: SessionEntry[]
}

/**
 * Everything one replica holds, every branch included, for comparing replicas entry for entry
 * and revision for revision. `updated_at` is each replica's own clock unless asked for.
 */
export async function replicaSnapshot(
  store: Store,
  options: { updatedAt?: boolean } = {},
): Promise<Record<string, ReplicaSession>> {
  await store.flush()
  const out: Record<string, ReplicaSession> = {}
  for (const id of [...store.engine.state.sessions.keys()].sort()) {
    await store.engine.ensureLoaded(id)
    const s = store.engine.state.sessions.get(id)
    if (!s) continue
    const meta = options.updatedAt ? s.head.meta : ({ ...s.head.meta, updated_at: 0 } as SessionMeta)
    out[id] = {
      meta,
      leaf: s.head.leaf,
      entries: [...(s.entries?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1)),
    }
  }
  return out
}
