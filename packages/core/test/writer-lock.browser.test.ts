import { afterEach, describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage, type SessionEntry, type Store } from '../src/index.js'
import { idbStores, user } from './idb-stores.js'

// One writer per IndexedDB database (`writer-lock.ts`), in Chromium: two stores on one database
// in one page contend on `navigator.locks` and hand the lock over on a BroadcastChannel exactly
// as two tabs do. The holder skips the read of each commit's head; these tests check that it
// never writes on a head another store changed, and that nothing wedges.

const { dbName } = idbStores('writer-lock')
const extra: Store[] = []
afterEach(async () => {
  for (const s of extra.splice(0)) await s.close()
})
/** A store on `name`; `multiTab: false` leaves out the relay, so it learns of others' writes from the disk only. */
const storeOn = async (name: string, multiTab = false): Promise<Store> => {
  const s = await createStore({ storage: indexedDbStorage({ name }), multiTab })
  extra.push(s)
  return s
}
const closeNow = async (s: Store): Promise<void> => {
  await s.close()
  extra.splice(extra.indexOf(s), 1)
}
const lockOf = (name: string): string => `colloquy:writer:${name}`
/** Whether no one holds `name`'s writer lock (taken and given back at once when free). */
const free = (name: string): Promise<boolean> =>
  navigator.locks.request(lockOf(name), { ifAvailable: true }, (lock) => lock !== null)
/** Waits (up to 2 s) until the lock is free: a lock let go is released a task later. */
const freed = async (name: string): Promise<boolean> => {
  for (let i = 0; i < 200; i++) {
    if (await free(name)) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return false
}
const ids = async (s: Store, session_id: string): Promise<string[]> =>
  (await s.messages({ session_id, limit: 500 })).messages.map((m) => m.entry_id)
const texts = async (s: Store, session_id: string): Promise<string[]> =>
  (await s.messages({ session_id, limit: 500 })).messages.map(
    (m) => (m.message!.content as Array<{ text: string }>)[0].text,
  )
/** What a fresh store reads from disk: path, count and leaf of one session. */
const onDisk = async (
  name: string,
  session_id: string,
): Promise<{ path: string[]; count: number | undefined }> => {
  const c = await storeOn(name)
  try {
    return { path: await ids(c, session_id), count: (await c.get({ session_id }))?.meta.message_count }
  } finally {
    await closeNow(c)
  }
}
/** Counts the reads of stamps (the index get each checked commit issues) while `fn` runs. */
const stampReads = async (fn: () => Promise<void>): Promise<number> => {
  const get = IDBIndex.prototype.get
  let n = 0
  IDBIndex.prototype.get = function (this: IDBIndex, query: IDBValidKey | IDBKeyRange) {
    if (this.name === 'stamps') n++
    return get.call(this, query)
  }
  try {
    await fn()
  } finally {
    IDBIndex.prototype.get = get
  }
  return n
}
const serially = async (s: Store, session_id: string, tag: string, n: number): Promise<string[]> => {
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push((await s.append({ session_id, message: user(`${tag}${i}`) })).entry_id)
  return out
}
/** Runs `fn` with `navigator.locks` hidden, as in a browser without Web Locks. */
const withoutLocks = async <T>(fn: () => Promise<T>): Promise<T> => {
  Object.defineProperty(navigator, 'locks', { value: undefined, configurable: true })
  try {
    return await fn()
  } finally {
    delete (navigator as unknown as Record<string, unknown>).locks
  }
}

describe('one writer per IndexedDB database', () => {
  it('a store holding the lock appends without reading the disk, and holds it between commits', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('checked') })
    expect(await free(name)).toBe(false)
    const reads = await stampReads(async () => {
      await serially(a, session_id, 'm', 20)
    })
    expect(reads).toBe(0)
    expect(await onDisk(name, session_id)).toStrictEqual({ path: await ids(a, session_id), count: 21 })
  })

  it('pipelined appends of a holder (the next batch built on the one committing) read nothing and keep their order', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('checked') })
    const writes: Array<Promise<{ entry_id: string; parent_id: string | null }>> = []
    const reads = await stampReads(async () => {
      for (let i = 0; i < 40; i++) {
        writes.push(a.append({ session_id, message: user(`p${i}`) }))
        await new Promise((r) => setTimeout(r, 0))
      }
      await Promise.all(writes)
    })
    const results = await Promise.all(writes)
    expect(reads).toBe(0)
    expect(a.engine.reruns).toBe(0)
    for (let i = 1; i < results.length; i++) expect(results[i].parent_id).toBe(results[i - 1].entry_id)
    expect((await onDisk(name, session_id)).path.slice(1)).toStrictEqual(results.map((r) => r.entry_id))
  })

  it('a pipelined batch built on one that fails runs again on the disk, not on the failed draft', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({})
    const first = await a.append({ session_id, message: user('kept') })
    const put = IDBObjectStore.prototype.put
    // The doomed append's transaction aborts once its put went through (as a quota error would):
    // a second write of its key fails (ConstraintError), also after an early `commit()`.
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      const r = put.call(this, value, key)
      return JSON.stringify(value).includes('doomed') ? this.add(value, key) : r
    }
    let doomed: Promise<unknown>
    let next: Promise<{ entry_id: string; parent_id: string | null }>
    try {
      doomed = a.append({ session_id, message: user('doomed') }).catch((e: unknown) => e)
      await new Promise((r) => setTimeout(r, 0))
      next = a.append({ session_id, message: user('next') })
      await Promise.allSettled([doomed, next])
    } finally {
      IDBObjectStore.prototype.put = put
    }
    expect(await doomed).toMatchObject({ code: 'session/storage' })
    expect((await next).parent_id).toBe(first.entry_id)
    expect(a.engine.reruns).toBe(1)
    expect(await texts(a, session_id)).toStrictEqual(['kept', 'next'])
    expect(await onDisk(name, session_id)).toStrictEqual({ path: await ids(a, session_id), count: 2 })
  })

  it('without navigator.locks every commit reads the disk, and two stores appending at once still end on one chain', async () => {
    const name = dbName()
    await withoutLocks(async () => {
      const a = await storeOn(name)
      const b = await storeOn(name)
      const { session_id } = await a.create({})
      await b.list({})
      const reads = await stampReads(async () => {
        await serially(a, session_id, 'm', 5)
      })
      expect(reads).toBe(5)
      const [fromA, fromB] = await Promise.all([
        serially(a, session_id, 'a', 20),
        serially(b, session_id, 'b', 20),
      ])
      const disk = await onDisk(name, session_id)
      expect(disk.count).toBe(45)
      expect(disk.path.filter((id) => fromA.includes(id))).toStrictEqual(fromA)
      expect(disk.path.filter((id) => fromB.includes(id))).toStrictEqual(fromB)
    })
    // Nothing was taken: no lock was ever requested.
    expect(await free(name)).toBe(true)
  })

  for (const multiTab of [false, true]) {
    it(`two stores appending at once in serial loops both succeed on one chain (${multiTab ? 'with' : 'without'} the relay)`, async () => {
      const name = dbName()
      const a = await storeOn(name, multiTab)
      const b = await storeOn(name, multiTab)
      const { session_id } = await a.create({})
      await b.list({})
      const [fromA, fromB] = await Promise.all([
        serially(a, session_id, 'a', 40),
        serially(b, session_id, 'b', 40),
      ])
      const disk = await onDisk(name, session_id)
      expect(disk.count).toBe(80)
      expect([...disk.path].sort()).toStrictEqual([...fromA, ...fromB].sort())
      expect(disk.path.filter((id) => fromA.includes(id))).toStrictEqual(fromA)
      expect(disk.path.filter((id) => fromB.includes(id))).toStrictEqual(fromB)
      // Both stores end on the disk's chain with their next commit.
      for (const s of [a, b]) {
        const last = await s.append({ session_id, message: user('last') })
        expect((await ids(s, session_id)).slice(0, 80)).toStrictEqual(disk.path)
        expect(last.parent_id).not.toBeNull()
      }
      expect((await onDisk(name, session_id)).count).toBe(82)
    })
  }

  it('two stores firing bursts of appends at once both succeed on one chain', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({})
    await b.list({})
    const burst = (s: Store, tag: string): Promise<string[]> =>
      Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          s.append({ session_id, message: user(`${tag}${i}`) }).then((r) => r.entry_id),
        ),
      )
    const rounds = await Promise.all([burst(a, 'a'), burst(b, 'b'), burst(a, 'c'), burst(b, 'd')])
    const all = rounds.flat()
    const disk = await onDisk(name, session_id)
    expect(disk.count).toBe(120)
    expect([...disk.path].sort()).toStrictEqual([...all].sort())
    for (const s of [a, b]) {
      await s.append({ session_id, message: user('after') })
      expect((await ids(s, session_id)).slice(0, 120)).toStrictEqual(disk.path)
    }
  })

  it('two stores streaming updates to their own replies at once hand the lock over and lose no token', async () => {
    const reply = {
      role: 'assistant',
      content: [{ type: 'text', text: '' }],
      timestamp: 0,
      stop_reason: 'end',
      model: 'm',
      provider: 'p',
    } as never
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({})
    const ra = await a.append({ session_id, message: reply })
    await b.list({})
    const rb = await b.append({ session_id, message: reply })
    const stream = async (s: Store, entry_id: string, tag: string): Promise<string> => {
      let text = ''
      for (let i = 0; i < 60; i++) {
        text += `${tag}${i} `
        await s.updateMessage({ session_id, entry_id, content: [{ type: 'text', text }] })
      }
      return text
    }
    const [ta, tb] = await Promise.all([stream(a, ra.entry_id, 'a'), stream(b, rb.entry_id, 'b')])
    const c = await storeOn(name)
    const textOf = async (s: Store, entry_id: string): Promise<string> =>
      (
        ((await s.getMessage({ session_id, entry_id }))!.entry as SessionEntry & { kind: 'message' }).message
          .content as Array<{ text: string }>
      )[0].text
    expect(await textOf(c, ra.entry_id)).toBe(ta)
    expect(await textOf(c, rb.entry_id)).toBe(tb)
    expect((await c.getMessage({ session_id, entry_id: ra.entry_id }))!.entry.revision).toBe(60)
    expect((await c.getMessage({ session_id, entry_id: rb.entry_id }))!.entry.revision).toBe(60)
    // Both replies on one chain: b's was appended after a's.
    expect(await ids(c, session_id)).toStrictEqual([ra.entry_id, rb.entry_id])
    // After the handovers each store appends on what the other wrote last.
    const x = await a.append({ session_id, message: user('x') })
    const y = await b.append({ session_id, message: user('y') })
    expect([x.parent_id, y.parent_id]).toStrictEqual([rb.entry_id, x.entry_id])
    expect(await onDisk(name, session_id)).toStrictEqual({
      path: [ra.entry_id, rb.entry_id, x.entry_id, y.entry_id],
      count: 4,
    })
  })

  it('after a handover the first holder appends on the chain the other wrote: memory equals disk, and a reopen agrees', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({})
    const a1 = await a.append({ session_id, message: user('a1') })
    await a.append({ session_id, message: user('a2') })
    expect(await free(name)).toBe(false)
    // b, silent, takes the lock from a (a holds it idle) and writes twice.
    const b1 = await b.append({ session_id, message: user('b1') })
    const b2 = await b.append({ session_id, message: user('b2') })
    // a's memory still ends at a2: its trust went with the lock, so it checks and reads again.
    const a3 = await a.append({ session_id, message: user('a3') })
    expect(a3.parent_id).toBe(b2.entry_id)
    expect(await texts(a, session_id)).toStrictEqual(['a1', 'a2', 'b1', 'b2', 'a3'])
    const disk = await onDisk(name, session_id)
    expect(disk).toStrictEqual({ path: await ids(a, session_id), count: 5 })
    // Going on in turns.
    const b3 = await b.append({ session_id, message: user('b3') })
    expect(b3.parent_id).toBe(a3.entry_id)
    const a4 = await a.append({ session_id, message: user('a4') })
    expect(a4.parent_id).toBe(b3.entry_id)
    expect(await texts(b, session_id)).toStrictEqual(['a1', 'a2', 'b1', 'b2', 'a3', 'b3'])
    await closeNow(a)
    const again = await storeOn(name)
    expect(await texts(again, session_id)).toStrictEqual(['a1', 'a2', 'b1', 'b2', 'a3', 'b3', 'a4'])
    expect((await again.get({ session_id }))!.meta.message_count).toBe(7)
    expect(b1.parent_id).not.toBe(a1.entry_id)
  })

  it('a delete and an import by the store not holding the lock are seen by the holder', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    await a.ensure({ session_id: 's1' })
    await a.append({ session_id: 's1', entry_id: 'x1', message: user('old') })
    await b.list({})
    // b deletes s1 while a holds the lock (idle).
    await b.delete({ session_id: 's1' })
    await expect(a.append({ session_id: 's1', message: user('lost?') })).rejects.toMatchObject({
      code: 'session/not_found',
    })
    expect(await a.get({ session_id: 's1' })).toBeNull()
    // b imports s1 again with other entries; a appends on the imported chain.
    const entry = (id: string, parent_id: string | null, text: string): SessionEntry =>
      ({ id, parent_id, timestamp: 5, revision: 0, kind: 'message', message: user(text) }) as SessionEntry
    await b.importSession({
      meta: {
        session_id: 's1',
        title: 'imported',
        description: '',
        status: 'idle',
        kind: 'user',
        created_at: 1,
        updated_at: 1,
        message_count: 0,
      } as never,
      entries: [entry('i1', null, 'imp one'), entry('i2', 'i1', 'imp two')],
      active_leaf: 'i2',
    })
    const after = await a.append({ session_id: 's1', message: user('on the import') })
    expect(after.parent_id).toBe('i2')
    expect(await texts(a, 's1')).toStrictEqual(['imp one', 'imp two', 'on the import'])
    expect(await onDisk(name, 's1')).toStrictEqual({ path: await ids(a, 's1'), count: 3 })
    // And the other way: a (now holding) deletes, b, silent, must not append to the old chain.
    await a.delete({ session_id: 's1' })
    await expect(b.append({ session_id: 's1', message: user('stale') })).rejects.toMatchObject({
      code: 'session/not_found',
    })
    const c = await storeOn(name)
    expect(await c.get({ session_id: 's1' })).toBeNull()
  })

  it('two stores mixing appends, updates, leaf moves, deletes and re-creates at once end with memory equal to disk', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const sessions = ['m1', 'm2', 'm3']
    for (const id of sessions) await a.ensure({ session_id: id })
    await b.list({})
    // A fixed sequence per store (no randomness: a failure replays), every call allowed to fail
    // (a session the other store deleted, an entry not there any more).
    const run = async (s: Store, tag: string, seed: number): Promise<void> => {
      let x = seed
      const next = (n: number): number => (x = (x * 1103515245 + 12345) % 2147483648) % n
      const mine: Array<{ session_id: string; entry_id: string }> = []
      for (let i = 0; i < 60; i++) {
        const session_id = sessions[next(3)]
        const op = next(10)
        const known = mine.filter((m) => m.session_id === session_id)
        const pick = known[next(Math.max(known.length, 1))]
        await (async () => {
          if (op < 5)
            mine.push({
              session_id,
              entry_id: (await s.append({ session_id, message: user(`${tag}${i}`) })).entry_id,
            })
          else if (op < 7 && pick)
            await s.updateMessage({
              session_id,
              entry_id: pick.entry_id,
              content: [{ type: 'text', text: `${tag}${i} edit` }],
            })
          else if (op < 8 && pick) await s.setActiveLeaf({ session_id, entry_id: pick.entry_id })
          else if (op < 9) await s.delete({ session_id })
          else await s.ensure({ session_id })
        })().catch(() => {})
      }
    }
    await Promise.all([run(a, 'a', 1), run(b, 'b', 2)])
    // A store's next write reads what it does not hold as current: right after it, its memory
    // is the disk (these stores have no relay, so only their own writes bring them up to date).
    // Each lands on the one before it, whichever store wrote that.
    const synced = new Map<string, string>()
    for (const s of [a, b, a]) {
      for (const id of sessions) {
        await s.ensure({ session_id: id })
        const last = await s.append({ session_id: id, message: user('sync') })
        if (synced.has(id)) expect(last.parent_id).toBe(synced.get(id))
        synced.set(id, last.entry_id)
        const disk = await onDisk(name, id)
        expect(disk.path.at(-1)).toBe(last.entry_id)
        expect(await ids(s, id)).toStrictEqual(disk.path)
        expect((await s.get({ session_id: id }))!.meta.message_count).toBe(disk.count)
      }
    }
  })

  it('close() lets the lock go: another store takes it', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('a') })
    expect(await free(name)).toBe(false)
    await closeNow(a)
    expect(await freed(name)).toBe(true)
    const b = await storeOn(name)
    await b.append({ session_id, message: user('b') })
    expect(await free(name)).toBe(false)
    expect(await texts(b, session_id)).toStrictEqual(['a', 'b'])
  })

  for (const [event, fire] of [
    ['pagehide', () => dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))],
    ['freeze', () => document.dispatchEvent(new Event('freeze'))],
  ] as const) {
    it(`${event} lets the lock go; the store takes it again on its next write`, async () => {
      const name = dbName()
      const a = await storeOn(name)
      const { session_id } = await a.create({})
      await a.append({ session_id, message: user('before') })
      expect(await free(name)).toBe(false)
      fire()
      expect(await freed(name)).toBe(true)
      // Another store takes it meanwhile, then a writes again on what that store wrote.
      const b = await storeOn(name)
      const mid = await b.append({ session_id, message: user('meanwhile') })
      const after = await a.append({ session_id, message: user('after') })
      expect(after.parent_id).toBe(mid.entry_id)
      expect(await free(name)).toBe(false)
      expect(await texts(a, session_id)).toStrictEqual(['before', 'meanwhile', 'after'])
    })
  }

  it('a holder asked while a commit is in flight lets go once it finishes; the asker then writes', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('a0') })
    await b.list({})
    // a's commit and b's request for the lock start in the same tick.
    const [ra, rb] = await Promise.all([
      a.append({ session_id, message: user('a1') }),
      b.append({ session_id, message: user('b1') }),
    ])
    const path = (await onDisk(name, session_id)).path
    expect(path).toHaveLength(3)
    expect(path).toContain(ra.entry_id)
    expect(path).toContain(rb.entry_id)
    expect(path.at(-1) === rb.entry_id ? rb.parent_id : ra.parent_id).toBe(path[1])
  })
})
