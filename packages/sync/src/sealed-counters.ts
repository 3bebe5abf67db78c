import type { SideWrite, Store } from '@colloquy/core'

// The sealed meta counters a device holds (sealing.ts), kept in the store's `kv` side records so
// that a device that reloads still refuses an older meta field replayed to it. One record per
// session: a field's counter and the log position it was seen at, never a box or a value. They
// tell no more than the server holds already (session ids, each field's counter, which is the
// time of its last edit, and a log position); in an encrypted store side records are sealed
// whole at rest like any other.

/** The `kv` key prefix of a session's counters. */
export const SEALED_COUNTERS = 'sync:sealed-meta:'

/** Per field, the highest counter seen (`title`, ..., `metadata`), and where in the server's log. */
export interface HeldCounters {
  readonly revs: Readonly<Record<string, number>>
  readonly seq: number
}

export interface CounterStore {
  load(): Promise<Map<string, HeldCounters>>
  save(held: ReadonlyMap<string, HeldCounters>): Promise<void>
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

/** A stored record, checked (the store is this device's, but a record that is not one is skipped). */
function parsed(v: unknown): HeldCounters | undefined {
  const o = v as { revs?: unknown; seq?: unknown } | null
  if (typeof o !== 'object' || o === null || !count(o.seq)) return undefined
  if (typeof o.revs !== 'object' || o.revs === null || Array.isArray(o.revs)) return undefined
  const revs: Record<string, number> = {}
  for (const [k, rev] of Object.entries(o.revs)) {
    if (!count(rev)) return undefined
    revs[k] = rev
  }
  return { revs, seq: o.seq }
}

/** The counters of `store`, in its side records of `kv` (the side store of the checkpoint). */
export function storeCounters(store: Store, kv: string): CounterStore {
  return {
    async load() {
      const out = new Map<string, HeldCounters>()
      for (const r of (await store.storage.sideRecords?.(kv)) ?? []) {
        if (typeof r.key !== 'string' || !r.key.startsWith(SEALED_COUNTERS)) continue
        const held = parsed(r.value)
        if (held) out.set(r.key.slice(SEALED_COUNTERS.length), held)
      }
      return out
    },
    async save(held) {
      const side: SideWrite[] = [...held].map(([session_id, value]) => ({
        store: kv,
        key: `${SEALED_COUNTERS}${session_id}`,
        value,
      }))
      if (side.length) await store.applyReplica([], { policy: 'pull', side })
    },
  }
}
