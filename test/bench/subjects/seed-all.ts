import { branchedSession } from './data.js'
import { openColloquy } from './colloquy.js'
import { BenchDexie, dexieEntry } from './dexie.js'
import { openRaw, putEntries } from './raw-idb.js'
import type { Subject } from './rows.js'
import { openRx, rxEntry } from './rxdb.js'

/**
 * Writes one branched session into every subject's database with its bulk API and closes every
 * connection, so a workload then measures opening or holding it. Nothing of the generated data
 * stays referenced after it returns.
 */
export async function seedAll(
  names: Record<Subject, string>,
  session_id: string,
  entries: number,
  branches: number,
): Promise<void> {
  const session = branchedSession(session_id, entries, branches)
  const raw = await openRaw(names['raw idb'])
  await putEntries(raw, session_id, session.entries)
  raw.close()
  const store = await openColloquy(names.colloquy)
  await store.importSession(session)
  await store.close()
  const dexie = new BenchDexie(names.dexie)
  await dexie.entries.bulkAdd(session.entries.map((e) => dexieEntry(session_id, e)))
  dexie.close()
  const rx = await openRx(names.rxdb)
  try {
    await rx.entries.bulkInsert(session.entries.map((e) => rxEntry(session_id, e)))
  } finally {
    await rx.db.close()
  }
}
