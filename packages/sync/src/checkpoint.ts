import type { SideWrite } from '@colloquy/core'
import { KV, kv, type Replication } from './state.js'

/** The cursor's keys in the `kv` side store: written in the transaction of what they cover. */
export const CHECKPOINT = 'sync:checkpoint'
export const EPOCH = 'sync:epoch'
/** Set while a full resync (after a reset answer) has not finished (it restarts from 0): the local leaves before it. */
export const RESYNC = 'sync:resync'

/** The side writes that move the cursor to `checkpoint` (with the epoch it belongs to). */
export function cursorWrites(checkpoint: number, epoch: string | undefined): SideWrite[] {
  const side: SideWrite[] = [{ store: KV, key: CHECKPOINT, value: checkpoint }]
  if (epoch !== undefined) side.push({ store: KV, key: EPOCH, value: epoch })
  return side
}

/** Reads the stored cursor as a tab starts leading. A resync cut short starts again from 0. */
export async function loadCursor(s: Replication): Promise<void> {
  const stored = await kv(s)
  s.checkpoint = Number(stored.get(CHECKPOINT) ?? 0)
  s.epoch = typeof stored.get(EPOCH) === 'string' ? (stored.get(EPOCH) as string) : undefined
  const pending = stored.get(RESYNC)
  if (pending) {
    s.checkpoint = 0
    s.resync = {
      sessions: new Set(),
      entries: new Set(),
      leaves: s.resync?.leaves ?? new Map(Array.isArray(pending) ? (pending as Array<[string, string]>) : []),
    }
  }
}
