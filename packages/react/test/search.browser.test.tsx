import './act-environment.js'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { enableSearch, type Search, type SearchResult } from '@colloquy/core/search'
import { afterEach, describe, expect, it } from 'vitest'
import { LOADING, useSearch, type SearchLike } from '../src/index.js'
import { memoryStore, user } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

const open: Search[] = []
afterEach(() => open.splice(0).forEach((s) => s.close()))

async function searchable() {
  const store = await memoryStore()
  const search = await enableSearch(store, { settleMs: 0 })
  open.push(search)
  return { store, search }
}

/** The handle, counting the subscriptions the hook holds open on it and the requests they asked. */
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
    const { result, rerender } = renderHook(({ s }: { s: Search | null }) => useSearch(s, 'postgr'), {
      wrapper: providerOf(store),
      initialProps: { s: null as Search | null },
    })
    expect(result.current).toBe(LOADING)
    rerender({ s: search })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    expect(words(result.current.data!.hits)).toEqual(['postgres'])
    expect(result.current.data!.hits[0]).toMatchObject({ session_id, role: 'user', on_active_path: true })

    await act(() => store.append({ session_id, message: user('postgresql has cursors too') }))
    await waitFor(() => expect(result.current.data!.hits).toHaveLength(2))
    expect(words(result.current.data!.hits).sort()).toEqual(['postgres', 'postgresql'])
  })

  it('asks again only when the words or the options change by value', async () => {
    const { store, search } = await searchable()
    const { session_id } = await store.create({ title: 'a' })
    await store.append({ session_id, message: user('alpha beta') })
    await store.append({ session_id, message: user('alpha gamma') })
    const handle = counted(search)
    const { result, rerender, unmount } = renderHook(
      ({ q }: { q: string }) => useSearch(handle, q, { limit: 1 }), // a new options object every render
      { wrapper: providerOf(store), initialProps: { q: 'alpha' } },
    )
    await waitFor(() => expect(result.current.data?.hits).toHaveLength(1))
    const asked = handle.asked.length
    rerender({ q: 'alpha' })
    rerender({ q: 'alpha' })
    expect(handle.asked).toHaveLength(asked)
    expect(handle.open).toBe(1)
    rerender({ q: 'gamma' })
    await waitFor(() => expect(words(result.current.data?.hits ?? [])).toEqual(['gamma']))
    expect(handle.open).toBe(1)
    expect(handle.asked.at(-1)).toBe(JSON.stringify({ limit: 1, query: 'gamma' }))
    unmount()
    expect(handle.open).toBe(0)
  })

  it('passes the filters: a message off the active path is left out with active_path_only', async () => {
    const { store, search } = await searchable()
    const { session_id } = await store.create({ title: 'b' })
    const root = await store.append({ session_id, message: user('start') })
    await store.append({ session_id, message: user('zebra on the first branch'), parent_id: root.entry_id })
    await store.append({ session_id, message: user('lion on the second branch'), parent_id: root.entry_id })
    const all = renderHook(() => useSearch(search, 'zebra'), { wrapper: providerOf(store) })
    const active = renderHook(() => useSearch(search, 'zebra', { active_path_only: true }), {
      wrapper: providerOf(store),
    })
    await waitFor(() => expect(all.result.current.data?.hits).toHaveLength(1))
    expect(all.result.current.data!.hits[0].on_active_path).toBe(false)
    await waitFor(() => expect(active.result.current.status).toBe('ready'))
    expect(active.result.current.data!.hits).toEqual([])
  })

  it('returns a bad request as an error state with its SessionError', async () => {
    const { store, search } = await searchable()
    const { result } = renderHook(() => useSearch(search, 'x'.repeat(2000)), { wrapper: providerOf(store) })
    await waitFor(() => expect(result.current.status).toBe('error'))
    expect(result.current.error).toMatchObject({ code: 'session/invalid_request' })
  })
})
