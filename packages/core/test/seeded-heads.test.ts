import { firstValueFrom } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '../src/index.js'
import { engineOf } from '../src/store.js'

// A live list's page of heads seeds the working set (the chat opened next needs no head read of
// its own), and a head so read may be stale by the time it arrives: it never replaces a head
// held, nor brings back a session another tab changed or deleted while the page was read.

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

/** Two "tabs" on one storage; the second hears of the first's commits only through `applyExternal`. */
async function tabs() {
  const storage = memoryStorage({ paged: true })
  const a = await createStore({ storage, multiTab: false })
  const b = await createStore({ storage, multiTab: false })
  return { storage, a, b, engine: engineOf(b) }
}

describe('heads a page read seed the working set', () => {
  it('a live list seeds its heads, and the session then reads no head of its own', async () => {
    const { storage, a, b, engine } = await tabs()
    const { session_id } = await a.create({ title: 'x' })
    await a.append({ session_id, message: user('hi') })
    const list = await firstValueFrom(b.sessions$({ limit: 50 }))
    expect(list.map((m) => m.session_id)).toStrictEqual([session_id])
    expect(engine.state.sessions.get(session_id)?.head.meta.message_count).toBe(1)
    const head = storage.paged!.head
    let heads = 0
    storage.paged!.head = (id) => (heads++, head(id))
    expect((await b.messages({ session_id })).messages).toHaveLength(1)
    expect(heads).toBe(0)
  })

  it('never replaces a head held (at least as new as the page)', async () => {
    const { storage, a, b, engine } = await tabs()
    const { session_id } = await a.create({ title: 'old' })
    const page = await storage.paged!.page({ order: 'updated_desc', limit: 10 })
    await a.setMeta({ session_id, title: 'new' })
    expect((await b.get({ session_id }))?.meta.title).toBe('new')
    await engine.readPage(async () => page)
    expect(engine.state.sessions.get(session_id)?.head.meta.title).toBe('new')
  })

  it('does not bring back a session another tab deleted while the page was read', async () => {
    const { storage, a, b, engine } = await tabs()
    const { session_id } = await a.create({ title: 'x' })
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const reading = engine.readPage(async () => {
      const heads = await storage.paged!.page({ order: 'updated_desc', limit: 10 })
      await gate
      return heads
    })
    await a.delete({ session_id })
    // The other tab's commit arrives (the relay's part) before the page does.
    engine.applyExternal('tab', { deleted: [session_id], heads: [], entries: [] }, [])
    release()
    expect((await reading).map((h) => h.meta.session_id)).toStrictEqual([session_id])
    expect(engine.state.sessions.has(session_id)).toBe(false)
    expect(await b.get({ session_id })).toBeNull()
  })
})
