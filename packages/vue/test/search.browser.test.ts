import { enableSearch, type Search, type SearchResult } from '@colloquy/core/search'
import { nextTick, ref, shallowRef } from 'vue'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LOADING, useSearch, type SearchLike } from '../src/index.js'
import { memoryStore, user } from '../../../test/support/fixtures.js'
import { withSetup } from './with-setup.js'

const open: Search[] = []
afterEach(() => open.splice(0).forEach((s) => s.close()))

async function searchable() {
  const store = await memoryStore()
  const search = await enableSearch(store, { settleMs: 0 })
  open.push(search)
  return { store, search }
}

/** The handle, counting the subscriptions the composable holds open on it and the requests they asked. */
function counted(search: Search): SearchLike & { open: number; asked: string[] } {
  const handle = {
    open: 0,
    asked: [] as string[],
    query$: (request: unknown) => ({
      subscribe(observer: { next: (value: SearchResult) => void; error: (error: unknown) => void }) {
        handle.open++
        handle.asked.push(JSON.stringify(request))
        const sub = search.query$(request).subscribe(observer)
        let closed = false
        return {
          unsubscribe() {
            if (!closed) handle.open--
            closed = true
            sub.unsubscribe()
          },
        }
      },
    }),
  }
  return handle
}

const words = (
  hits: readonly { snippet: { text: string; highlights: readonly (readonly [number, number])[] } }[],
) => hits.map((h) => h.snippet.highlights.map(([a, b]) => h.snippet.text.slice(a, b)).join(' '))

describe('useSearch', () => {
  it('is loading without a handle, then answers and follows new matching messages', async () => {
    const { store, search } = await searchable()
    const { session_id } = await store.create({ title: 'notes' })
    await store.append({ session_id, message: user('the postgres cursor pages') })
    const handle = shallowRef<Search | null>(null)
    const { result } = withSetup(() => useSearch(handle, 'postgr'), store)
    expect(result.value).toBe(LOADING)
    handle.value = search
    await vi.waitFor(() => expect(result.value.status).toBe('ready'))
    expect(words(result.value.data!.hits)).toEqual(['postgres'])
    expect(result.value.data!.hits[0]).toMatchObject({ session_id, role: 'user', on_active_path: true })

    await store.append({ session_id, message: user('postgresql has cursors too') })
    await vi.waitFor(() => expect(result.value.data!.hits).toHaveLength(2))
    expect(words(result.value.data!.hits).sort()).toEqual(['postgres', 'postgresql'])
  })

  it('asks again only when the words or the options change by value', async () => {
    const { store, search } = await searchable()
    const { session_id } = await store.create({ title: 'a' })
    await store.append({ session_id, message: user('alpha beta') })
    await store.append({ session_id, message: user('alpha gamma') })
    const handle = counted(search)
    const query = ref('alpha')
    const tick = ref(0)
    // A new options object whenever `tick` changes: equal by value, so the same question.
    const { result, wrapper } = withSetup(
      () => useSearch(handle, query, () => (tick.value, { limit: 1 })),
      store,
    )
    await vi.waitFor(() => expect(result.value.data?.hits).toHaveLength(1))
    const asked = handle.asked.length
    tick.value++
    await nextTick()
    tick.value++
    await nextTick()
    expect(handle.asked).toHaveLength(asked)
    expect(handle.open).toBe(1)
    query.value = 'gamma'
    await vi.waitFor(() => expect(words(result.value.data?.hits ?? [])).toEqual(['gamma']))
    expect(handle.open).toBe(1)
    expect(handle.asked.at(-1)).toBe(JSON.stringify({ limit: 1, query: 'gamma' }))
    wrapper.unmount()
    expect(handle.open).toBe(0)
  })

  it('passes the filters: a message off the active path is left out with active_path_only', async () => {
    const { store, search } = await searchable()
    const { session_id } = await store.create({ title: 'b' })
    const root = await store.append({ session_id, message: user('start') })
    await store.append({ session_id, message: user('zebra on the first branch'), parent_id: root.entry_id })
    await store.append({ session_id, message: user('lion on the second branch'), parent_id: root.entry_id })
    const { result } = withSetup(
      () => ({
        all: useSearch(search, 'zebra'),
        active: useSearch(search, 'zebra', { active_path_only: true }),
      }),
      store,
    )
    await vi.waitFor(() => expect(result.all.value.data?.hits).toHaveLength(1))
    expect(result.all.value.data!.hits[0].on_active_path).toBe(false)
    await vi.waitFor(() => expect(result.active.value.status).toBe('ready'))
    expect(result.active.value.data!.hits).toEqual([])
  })

  it('returns a bad request as an error state with its SessionError', async () => {
    const { store, search } = await searchable()
    const { result } = withSetup(() => useSearch(search, 'x'.repeat(2000)), store)
    await vi.waitFor(() => expect(result.value.status).toBe('error'))
    expect(result.value.error).toMatchObject({ code: 'session/invalid_request' })
  })
})
