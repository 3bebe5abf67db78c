import { Dexie, type Table } from 'dexie'
import type { SessionEntry } from '@colloquy/core'

/**
 * The Dexie baseline, written the way a Dexie user would: entries carry their session id and the
 * primary key is the compound [session_id+id], so a session is one key range (the same layout as
 * raw idb and Colloquy). Relaxed durability, like the others.
 */

export type DexieEntry = SessionEntry & { session_id: string }

export class BenchDexie extends Dexie {
  entries!: Table<DexieEntry, [string, string]>

  constructor(name: string) {
    super(name, { chromeTransactionDurability: 'relaxed' })
    this.version(1).stores({ entries: '[session_id+id]' })
  }
}

export const dexieEntry = (session_id: string, e: SessionEntry): DexieEntry => ({ ...e, session_id })

/** One session's entries: a range over the primary key (Dexie turns it into getAll). */
export const dexieSession = (db: BenchDexie, session_id: string): Promise<DexieEntry[]> =>
  db.entries
    .where('[session_id+id]')
    .between([session_id, Dexie.minKey], [session_id, Dexie.maxKey])
    .toArray()
