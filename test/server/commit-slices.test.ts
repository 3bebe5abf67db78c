import { cpSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore, type ReplicaChange, type Store } from '@colloquy/core'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { WORK_BUDGETS } from '../../packages/server/src/work.js'
import {
  journalLine,
  journalLineInSlices,
  writeSnapshot,
  type SideStores,
} from '../../packages/server/src/storage/file/journal.js'
import fc from 'fast-check'
import { cleanupAfterEach } from './helpers.js'

// A large commit on the file storage (a 1 MB push touching hundreds of sessions) is encoded and
// written in slices, letting other requests run between them, and stays one transaction: what
// runs between slices (a reader, or a crash that leaves the disk as it is then) sees none of it
// before its commit point and all of it after.

const { defer, dataDir } = cleanupAfterEach('slices')
const SESSIONS = 100

const open = async (dir: string, hooks: { afterCommitPoint?: () => void } = {}): Promise<Store> => {
  const store = await createStore({
    storage: fileStorage({ dir, fsync: false, warn: () => {}, ...hooks }),
    multiTab: false,
  })
  defer(() => store.close())
  return store
}
const meta = (session_id: string) => ({
  session_id,
  title: session_id,
  description: '',
  status: 'idle' as const,
  kind: 'user' as const,
  created_at: 1,
  updated_at: 1,
  message_count: 0,
})
const entry = (id: string) => ({
  id,
  parent_id: null,
  timestamp: 1,
  revision: 0,
  kind: 'message' as const,
  message: {
    role: 'user' as const,
    content: [{ type: 'text' as const, text: `${id} `.padEnd(4_000, 'x') }],
    timestamp: 1,
  },
})
/** How many of the big commit's entries a store holds (`f…` ids, one per session). */
const landed = async (store: Store): Promise<number> => {
  let n = 0
  for (let i = 0; i < SESSIONS; i++)
    if (await store.getMessage({ session_id: `s${i}`, entry_id: `f${i}` })) n++
  return n
}

describe('a large commit on the file storage', () => {
  it('is written in slices; a reader or a crash between them sees none of it before the commit point, all of it after', async () => {
    const dir = await dataDir()
    const crashDir = await dataDir()
    let committed = false
    const store = await open(dir, { afterCommitPoint: () => void (committed = true) })
    await store.applyReplica(
      Array.from({ length: SESSIONS }, (_, i): ReplicaChange => ({
        type: 'meta',
        create: true,
        meta: meta(`s${i}`),
      })),
      { policy: 'push' },
    )
    committed = false
    const big: ReplicaChange[] = Array.from({ length: SESSIONS }, (_, i) => ({
      type: 'entry',
      session_id: `s${i}`,
      base_revision: null,
      entry: entry(`f${i}`),
    }))
    // Far more than a slice: the commit must let other work run several times.
    expect(JSON.stringify(big).length).toBeGreaterThan(8 * WORK_BUDGETS.sliceChars)

    // Between slices: what a reader sees, and a copy of the data directory as a crash would leave it.
    const seen: Array<{ committed: boolean; held: number; copy?: string }> = []
    let done = false
    const tick = (): void => {
      if (done) return
      const held = [...Array(SESSIONS).keys()].filter((i) =>
        store.engine.state.sessions.get(`s${i}`)?.entries?.has(`f${i}`),
      ).length
      // A copy at some of them (copying is slow): the first few, then every fourth.
      let copy: string | undefined
      if (seen.length < 3 || seen.length % 4 === 0) {
        copy = join(crashDir, `crash-${seen.length}`)
        cpSync(dir, copy, { recursive: true })
      }
      seen.push({ committed, held, copy })
      setImmediate(tick)
    }
    setImmediate(tick)
    const results = await store.applyReplica(big, { policy: 'push' })
    done = true
    expect(results.every((r) => r.status === 'applied')).toBe(true)

    // The commit let other work run both before its commit point and after it (writing the session files).
    expect(seen.filter((s) => !s.committed).length).toBeGreaterThan(1)
    expect(seen.filter((s) => s.committed).length).toBeGreaterThan(1)
    // No reader saw part of it: the store shows a commit once it resolved.
    expect(seen.every((s) => s.held === 0)).toBe(true)
    expect(await landed(store)).toBe(SESSIONS)
    // A crash at any of those moments: all of it or none, all once past the commit point, none
    // at the start (the journal line is whole once written, a moment before its flush).
    const copies = seen.filter((s) => s.copy !== undefined)
    expect(copies.some((s) => s.committed)).toBe(true)
    for (const s of copies) {
      const n = await landed(await open(s.copy!))
      expect([0, SESSIONS]).toContain(n)
      if (s.committed) expect(n).toBe(SESSIONS)
    }
    expect(await landed(await open(copies[0]!.copy!))).toBe(0)
  })

  it('its journal line, built in slices, is the same text as built whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.array(fc.record({ store: fc.string(), key: fc.nat(), value: fc.jsonValue() })),
        fc.array(fc.string()),
        fc.array(fc.tuple(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }))),
        async (tx, side, deleted, writes) => {
          const line = {
            tx,
            side,
            v: 2 as const,
            ...(deleted.length && { deleted }),
            ...(writes.length && { writes }),
          }
          let told = 0
          expect(await journalLineInSlices(line, async (n) => void (told += n))).toBe(journalLine(line))
          expect(told).toBe(writes.reduce((n, w) => n + JSON.stringify(w).length, 0))
        },
      ),
    )
  })

  it('a checkpoint snapshot, its records encoded in slices, is the same text as the line built whole', async () => {
    const dir = await dataDir()
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.array(
          fc.tuple(fc.constantFrom('changes', 'changelog'), fc.oneof(fc.nat(), fc.string()), fc.jsonValue()),
        ),
        async (tx, records) => {
          const stores: SideStores = new Map()
          for (const [store, key, value] of records)
            (stores.get(store) ?? stores.set(store, new Map()).get(store)!).set(key, value)
          const side = [...stores].flatMap(([store, map]) =>
            [...map].map(([key, value]) => ({ store, key, value })),
          )
          let told = 0
          const path = join(dir, 'journal')
          const bytes = await writeSnapshot(path, tx, stores, false, [], async (n) => void (told += n))
          const whole = journalLine({ tx, side, snapshot: true, v: 2 })
          expect(readFileSync(path, 'utf8')).toBe(whole)
          expect(bytes).toBe(Buffer.byteLength(whole))
          expect(told).toBe(side.reduce((n, w) => n + JSON.stringify(w).length, 0))
        },
      ),
      { numRuns: 50 },
    )
  })
})
