import type { ReplicaChange, SideWrite, Store } from '@colloquy/core'
import type { MutationId } from '@colloquy/core/protocol'

// Mutations sealed and pushed, not answered yet (sealing.ts), kept in the store's `kv` side
// records beside the outbox they come from: a device that reloads between a push and its
// answer retries the very ciphertext it sent, which the server answers as unchanged. Sealed
// anew (a fresh IV, a new box), the retry would be a conflicting edit of the device with itself.
// On an encrypted store side records are sealed whole at rest, the clear change among them.

/** The `kv` key prefix of a mutation's sealed form. */
export const SEALED_SENT = 'sync:sealed-push:'

/** A mutation as it was sealed: the clear change (JSON) it seals, and the sealed change. */
export interface SentSeal {
  readonly clear: string
  readonly sealed: ReplicaChange
}

export interface SentStore {
  load(): Promise<Map<MutationId, SentSeal>>
  /** Keeps `put` and forgets `drop`, in one write. */
  save(put: ReadonlyMap<MutationId, SentSeal>, drop: readonly MutationId[]): Promise<void>
}

const keyOf = (id: MutationId): string => `${SEALED_SENT}${JSON.stringify(id)}`

/** A stored record, checked (the store is this device's, but a record that is not one is skipped). */
function parsed(v: unknown): (SentSeal & { id: MutationId }) | undefined {
  const o = v as { id?: unknown; clear?: unknown; sealed?: unknown } | null
  if (typeof o !== 'object' || o === null) return undefined
  if (typeof o.id !== 'number' && typeof o.id !== 'string') return undefined
  if (typeof o.clear !== 'string' || typeof o.sealed !== 'object' || o.sealed === null) return undefined
  return { id: o.id, clear: o.clear, sealed: o.sealed as ReplicaChange }
}

/** The sealed forms of `store`'s pushed mutations, in its side records of `kv`. */
export function storeSent(store: Store, kv: string): SentStore {
  return {
    async load() {
      const out = new Map<MutationId, SentSeal>()
      for (const r of (await store.storage.sideRecords?.(kv)) ?? []) {
        if (typeof r.key !== 'string' || !r.key.startsWith(SEALED_SENT)) continue
        const held = parsed(r.value)
        if (held) out.set(held.id, { clear: held.clear, sealed: held.sealed })
      }
      return out
    },
    async save(put, drop) {
      const side: SideWrite[] = [
        ...[...put].map(([id, { clear, sealed }]) => ({
          store: kv,
          key: keyOf(id),
          value: { id, clear, sealed },
        })),
        ...drop.map((id) => ({ store: kv, key: keyOf(id), value: undefined })),
      ]
      if (side.length) await store.applyReplica([], { policy: 'pull', side })
    },
  }
}
