import { createRxDatabase, type RxCollection, type RxDatabase, type RxJsonSchema } from 'rxdb'
import { getRxStorageDexie } from 'rxdb/plugins/storage-dexie'
import type { SessionEntry } from '@colloquy/core'

/**
 * The RxDB baseline with its free Dexie storage (no dev-mode plugin, no premium storage): one
 * collection, a string primary key `${session_id}|${entry_id}` and `session_id` indexed.
 * RxDB keeps at most 13 collections open without a premium licence, so every workload closes
 * its databases.
 */

export type RxEntry = SessionEntry & { key: string; session_id: string }

const schema: RxJsonSchema<RxEntry> = {
  version: 0,
  primaryKey: 'key',
  type: 'object',
  properties: {
    key: { type: 'string', maxLength: 120 },
    session_id: { type: 'string', maxLength: 100 },
    id: { type: 'string' },
    parent_id: { type: ['string', 'null'] },
    timestamp: { type: 'number' },
    revision: { type: 'number' },
    kind: { type: 'string' },
    message: { type: 'object' },
  },
  // The Dexie storage refuses indexes on fields that are not required.
  required: ['key', 'session_id', 'id', 'timestamp', 'revision', 'kind'],
  indexes: ['session_id'],
} as unknown as RxJsonSchema<RxEntry>

export interface BenchRx {
  db: RxDatabase
  entries: RxCollection<RxEntry>
}

export async function openRx(name: string): Promise<BenchRx> {
  const db = await createRxDatabase({
    name,
    storage: getRxStorageDexie({ chromeTransactionDurability: 'relaxed' }),
  })
  const { entries } = await db.addCollections({ entries: { schema } })
  return { db, entries: entries as RxCollection<RxEntry> }
}

export const rxEntry = (session_id: string, e: SessionEntry): RxEntry => ({
  ...e,
  key: `${session_id}|${e.id}`,
  session_id,
})

/** One session's entries as a query (sorted by primary key, through the session_id index). */
export const rxSession = (rx: BenchRx, session_id: string) => rx.entries.find({ selector: { session_id } })
