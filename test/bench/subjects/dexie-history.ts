import { Dexie, type Table } from 'dexie'
import type { SessionMeta } from '@colloquy/core'
import { dexieEntry, type DexieEntry } from './dexie.js'
import type { HistorySession } from './history.js'

/**
 * The Dexie baseline of a chat history (W9), written the way a Dexie user would: a table of
 * session metas keyed by session_id with `updated_at` indexed (the list's order), and the
 * entries table of `dexie.ts` (compound key [session_id+id]). Relaxed durability, like the others.
 */
export class HistoryDexie extends Dexie {
  sessions!: Table<SessionMeta, string>
  entries!: Table<DexieEntry, [string, string]>

  constructor(name: string) {
    super(name, { chromeTransactionDurability: 'relaxed' })
    this.version(1).stores({ sessions: 'session_id, updated_at', entries: '[session_id+id]' })
  }
}

/** Writes `sessions` (metas and entries) with Dexie's bulk API. */
export async function putHistory(db: HistoryDexie, sessions: readonly HistorySession[]): Promise<void> {
  await db.transaction('rw', db.sessions, db.entries, async () => {
    await db.sessions.bulkPut(sessions.map((s) => s.meta))
    await db.entries.bulkPut(sessions.flatMap((s) => s.entries.map((e) => dexieEntry(s.meta.session_id, e))))
  })
}

/** The newest `limit` sessions: what the issue names, `orderBy('updated_at').reverse().limit(n)`. */
export const newestSessions = (db: HistoryDexie, limit: number): Promise<SessionMeta[]> =>
  db.sessions.orderBy('updated_at').reverse().limit(limit).toArray()

/** The first `limit` entries of a session, over its key range. */
export const firstEntries = (db: HistoryDexie, session_id: string, limit: number): Promise<DexieEntry[]> =>
  db.entries
    .where('[session_id+id]')
    .between([session_id, Dexie.minKey], [session_id, Dexie.maxKey])
    .limit(limit)
    .toArray()
