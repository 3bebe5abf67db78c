import './act-environment.js'
import { act, cleanup, render, renderHook, screen } from '@testing-library/react'
import { Component, type ReactNode } from 'react'
import type { Store } from '@colloquy/core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  LOADING,
  useEntry,
  useMessageIds,
  useMessages,
  useObservable,
  useSession,
  useSessions,
  useStore,
  useSyncStatus,
  type SyncStatus,
} from '../src/index.js'
import { assistant, memoryStore, seedSession, subject, textOf, user } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

describe('store hooks', () => {
  it('useSessions follows creates, meta changes and deletes', async () => {
    const store = await memoryStore()
    const a = await store.create({ title: 'first' })
    const { result } = renderHook(() => useSessions({ order: 'created_asc' }), { wrapper: providerOf(store) })
    expect(result.current.data?.map((m) => m.title)).toEqual(['first'])
    const b = await act(() => store.create({ title: 'second' }))
    expect(result.current.data?.map((m) => m.title)).toEqual(['first', 'second'])
    await act(() => store.setMeta({ session_id: a.session_id, title: 'renamed' }))
    expect(result.current.data?.map((m) => m.title)).toEqual(['renamed', 'second'])
    await act(() => store.delete({ session_id: b.session_id }))
    expect(result.current.data?.map((m) => m.title)).toEqual(['renamed'])
  })

  it('useSessions applies the request (limit, status)', async () => {
    const store = await memoryStore()
    for (const title of ['a', 'b', 'c']) await store.create({ title })
    const { result } = renderHook(() => useSessions({ order: 'created_asc', limit: 2 }), {
      wrapper: providerOf(store),
    })
    expect(result.current.data?.map((m) => m.title)).toEqual(['a', 'b'])
  })

  it('useSession is null for a missing session and follows one that exists', async () => {
    const store = await memoryStore()
    const missing = renderHook(() => useSession('s_nope'), { wrapper: providerOf(store) })
    expect(missing.result.current).toMatchObject({ status: 'ready', data: null })
    const { session_id } = await store.create({ title: 'x' })
    const { result } = renderHook(() => useSession(session_id), { wrapper: providerOf(store) })
    expect(result.current.data?.title).toBe('x')
    await act(() => store.setStatus({ session_id, status: 'working' }))
    expect(result.current.data?.status).toBe('working')
  })

  it('useMessages follows appends and streamed content on the active path', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const { result } = renderHook(() => useMessages({ session_id }), { wrapper: providerOf(store) })
    expect(result.current).toMatchObject({ status: 'ready', data: [] })
    await act(() => store.append({ session_id, message: user('hi') }))
    const { entry_id } = await act(() => store.append({ session_id, message: assistant('') }))
    expect(result.current.data).toHaveLength(2)
    const first = result.current.data![0]
    await act(() => store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'Hello' }] }))
    expect(result.current.data![1].message?.content).toEqual([{ type: 'text', text: 'Hello' }])
    // The unchanged item is the same object: memoized rows skip it.
    expect(result.current.data![0]).toBe(first)
  })

  it('useMessages filters by roles and reads from from_entry_id', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 4)
    const roles = renderHook(() => useMessages({ session_id, roles: ['assistant'] }), {
      wrapper: providerOf(store),
    })
    expect(roles.result.current.data?.map((i) => i.entry_id)).toEqual([ids[1], ids[3]])
    const upTo = renderHook(() => useMessageIds({ session_id, from_entry_id: ids[1] }), {
      wrapper: providerOf(store),
    })
    expect(upTo.result.current.data).toEqual([ids[0], ids[1]])
  })

  it('useMessageIds keeps its array while content streams and changes it on append', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 2)
    const { result } = renderHook(() => useMessageIds({ session_id }), { wrapper: providerOf(store) })
    const before = result.current
    expect(before.data).toEqual(ids)
    await act(() =>
      store.updateMessage({ session_id, entry_id: ids[1], content: [{ type: 'text', text: 'more' }] }),
    )
    expect(result.current).toBe(before)
    const { entry_id } = await act(() => store.append({ session_id, message: user('next') }))
    expect(result.current.data).toEqual([...ids, entry_id])
  })

  it('useEntry follows one entry and is null for an unknown one', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 2)
    const { result } = renderHook(() => useEntry(session_id, ids[1]), { wrapper: providerOf(store) })
    expect(textOf(result.current.data)).toBe('a1')
    await act(() =>
      store.updateMessage({ session_id, entry_id: ids[1], content: [{ type: 'text', text: 'edited' }] }),
    )
    expect(textOf(result.current.data)).toBe('edited')
    expect(result.current.data?.revision).toBeGreaterThan(0)
    const unknown = renderHook(() => useEntry(session_id, 'e_nope'), { wrapper: providerOf(store) })
    expect(unknown.result.current).toMatchObject({ status: 'ready', data: null })
    await act(() => store.delete({ session_id }))
    expect(result.current).toMatchObject({ status: 'ready', data: null })
  })

  it('useEntry sees an entry that is appended after it was asked for', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const { result } = renderHook(() => useEntry(session_id, 'e_later'), { wrapper: providerOf(store) })
    expect(result.current.data).toBeNull()
    await act(() => store.append({ session_id, entry_id: 'e_later', message: user('here now') }))
    expect(textOf(result.current.data)).toBe('here now')
  })

  it('re-subscribes when an argument changes by value', async () => {
    const store = await memoryStore()
    const one = await store.create({ title: 'one' })
    const two = await store.create({ title: 'two' })
    const { result, rerender } = renderHook(({ id }) => useSession(id), {
      wrapper: providerOf(store),
      initialProps: { id: one.session_id },
    })
    expect(result.current.data?.title).toBe('one')
    rerender({ id: two.session_id })
    expect(result.current.data?.title).toBe('two')
  })
})

describe('provider', () => {
  it('reports loading everywhere while there is no store, then goes live when one arrives', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({ title: 'later' })
    let current: Store | null = null
    const useAll = () => ({
      sessions: useSessions(),
      session: useSession(session_id),
      messages: useMessages({ session_id }),
      store: useStore(),
    })
    const { result, rerender } = renderHook(useAll, {
      wrapper: ({ children }) => providerOf(current)({ children }),
    })
    expect(result.current.sessions).toBe(LOADING)
    expect(result.current.session).toBe(LOADING)
    expect(result.current.messages).toBe(LOADING)
    expect(result.current.store).toBeNull()
    current = store
    rerender()
    expect(result.current.store).toBe(store)
    expect(result.current.session.data?.title).toBe('later')
    expect(result.current.messages).toMatchObject({ status: 'ready', data: [] })
  })

  it('throws a clear error outside a provider', () => {
    const swallow = (e: Event): void => e.preventDefault()
    window.addEventListener('error', swallow)
    try {
      expect(() => renderHook(() => useSessions())).toThrow(/no <ColloquyProvider>/)
    } finally {
      window.removeEventListener('error', swallow)
    }
  })
})

describe('useSyncStatus', () => {
  it('is null without a sync client', async () => {
    const { result } = renderHook(() => useSyncStatus(), { wrapper: providerOf(await memoryStore()) })
    expect(result.current).toMatchObject({ status: 'ready', data: null })
  })

  it('follows status$ and unsubscribes on unmount', async () => {
    const status$ = subject<SyncStatus>()
    const { result, unmount } = renderHook(() => useSyncStatus(), {
      wrapper: providerOf(await memoryStore(), { status$ }),
    })
    expect(result.current).toBe(LOADING)
    act(() => status$.next({ state: 'syncing', pending: 3 }))
    expect(result.current.data).toEqual({ state: 'syncing', pending: 3 })
    act(() => status$.next({ state: 'idle', pending: 0, last_synced_at: 5 }))
    expect(result.current.data).toEqual({ state: 'idle', pending: 0, last_synced_at: 5 })
    expect(status$.observers).toBe(1)
    unmount()
    expect(status$.observers).toBe(0)
  })

  it('reports an error of status$ as the error state', async () => {
    const status$ = subject<SyncStatus>()
    const { result } = renderHook(() => useSyncStatus(), {
      wrapper: providerOf(await memoryStore(), { status$ }),
    })
    act(() => status$.fail(new Error('socket closed')))
    expect(result.current.status).toBe('error')
    expect(String(result.current.error)).toContain('socket closed')
  })
})

class Boundary extends Component<{ children: ReactNode }, { error?: unknown }> {
  override state: { error?: unknown } = {}
  static getDerivedStateFromError(error: unknown): { error: unknown } {
    return { error }
  }
  override render(): ReactNode {
    return this.state.error ? <p>caught: {String(this.state.error)}</p> : this.props.children
  }
}

describe('useObservable', () => {
  it('returns initial, then each value; components sharing the observable share one subscription', () => {
    const source = subject<number>()
    const Show = ({ label }: { label: string }): ReactNode => <p>{`${label}=${useObservable(source, -1)}`}</p>
    render(
      <>
        <Show label="a" />
        <Show label="b" />
      </>,
    )
    expect(screen.getByText('a=-1')).toBeTruthy()
    expect(source.observers).toBe(1)
    act(() => source.next(7))
    expect(screen.getByText('a=7')).toBeTruthy()
    expect(screen.getByText('b=7')).toBeTruthy()
    cleanup()
    expect(source.observers).toBe(0)
  })

  it('throws an error of the observable to the error boundary', () => {
    const source = subject<number>()
    const Show = (): ReactNode => <p>{`value=${useObservable(source, 0)}`}</p>
    const swallow = (e: Event): void => e.preventDefault()
    window.addEventListener('error', swallow)
    try {
      render(
        <Boundary>
          <Show />
        </Boundary>,
      )
      act(() => source.fail(new Error('boom')))
      expect(screen.getByText('caught: Error: boom')).toBeTruthy()
    } finally {
      window.removeEventListener('error', swallow)
    }
  })
})
