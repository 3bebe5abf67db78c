import { describe, expect, it } from 'vitest'
import { firstValueFrom, filter } from 'rxjs'
import { SessionError, type StorageUsage } from '../src/index.js'
import { idbStores, user } from './idb-stores.js'
import { noteLimit } from '../../../test/support/engine-limit.js'

// Storage a PWA can trust, in each engine: asking the browser to keep the site's data, usage
// and quota as a live query, and a write the quota refuses reported as such with nothing kept.

const { dbName, storeOn } = idbStores('device-storage')
const firefox = /Firefox\//.test(navigator.userAgent)
/** The Storage API (`navigator.storage`): absent in WebKitGTK's automation session. */
const storageApi = typeof navigator.storage?.estimate === 'function'
/** Text that does not compress: engines compress values, and usage must move. */
const noise = (bytes: number): string => {
  let out = ''
  for (let n = 0; n < bytes; n += 48_000)
    out += btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(36_000))))
  return out.slice(0, bytes)
}

describe('the browser storage behind a store', () => {
  // First: a persisted site (the next test asks for it) is not held to this quota.
  // Only where the run gives the site a small quota: Firefox's test profile has 40 MiB per site
  // (test/support/engine-provider.ts). Chromium's quota override (DevTools) did not hold for IndexedDB
  // values in these runs, and WebKitGTK has no Storage API; see the support table.
  it.skipIf(!firefox)(
    'a write over the quota fails with session/storage "quota exceeded", nothing of that batch is kept, and the store writes on once there is room',
    async () => {
      const name = dbName()
      const store = await storeOn(name)
      const { session_id } = await store.create({ title: 'kept' })
      let kept = 0
      let error: unknown
      // 4 MB batches of two messages each until one is refused (10 fill the quota).
      for (let i = 0; i < 30 && error === undefined; i++) {
        error = await store
          .appendMany({ session_id, messages: [user(`small ${i}`), user(noise(4 * 1024 * 1024))] })
          .then(
            () => void (kept += 2),
            (e: unknown) => e,
          )
      }
      expect(error).toBeInstanceOf(SessionError)
      expect((error as SessionError).code).toBe('session/storage')
      expect((error as SessionError).message).toMatch(/^session\/storage: quota exceeded: /)
      // The refused batch's small message is not there either: the transaction took back both.
      const { messages } = await store.messages({ session_id, limit: 500 })
      expect(messages).toHaveLength(kept)
      // Room again (a session deleted): the store writes on.
      const { session_id: other } = await store.create({})
      await store.delete({ session_id })
      await store.append({ session_id: other, message: user('after') })
      expect((await store.messages({ session_id: other })).messages).toHaveLength(1)
    },
    120_000,
  )

  it('requestPersistence asks navigator.storage.persist() and storage$ reports what persisted() says (nulls and false where there is no Storage API)', async (ctx) => {
    const store = await storeOn(dbName())
    if (!storageApi)
      noteLimit(
        ctx,
        'no Storage API (navigator.storage) in the automation session: requestPersistence() is false, storage$ emits nulls',
      )
    if (firefox)
      noteLimit(
        ctx,
        'persist() asks the user with a prompt (answered "allow" by a preference in the test profile)',
      )
    const granted = await store.requestPersistence()
    const first = await firstValueFrom(store.storage$)
    if (!storageApi) {
      expect(granted).toBe(false)
      expect(first).toStrictEqual({ usage: null, quota: null, persisted: null })
      return
    }
    expect(typeof granted).toBe('boolean')
    expect(first.persisted).toBe(await navigator.storage.persisted())
  })

  it.skipIf(!storageApi)(
    'storage$ gives usage and quota on subscribe, and again once commits have grown the usage',
    async () => {
      const store = await storeOn(dbName())
      const seen: StorageUsage[] = []
      const sub = store.storage$.subscribe((u) => seen.push(u))
      const first = await firstValueFrom(store.storage$)
      expect(first.quota).toBeGreaterThan(0)
      expect(first.usage).toBeGreaterThanOrEqual(0)
      const { session_id } = await store.create({})
      // Half a megabyte in a few appends: usage must move past what it was.
      for (let i = 0; i < 4; i++) await store.append({ session_id, message: user(noise(128 * 1024)) })
      const grown = await firstValueFrom(
        store.storage$.pipe(filter((u) => (u.usage ?? 0) > (first.usage ?? 0))),
      )
      expect(grown.quota).toBeGreaterThan(0)
      expect(seen.length).toBeGreaterThanOrEqual(2)
      sub.unsubscribe()
    },
  )
})
