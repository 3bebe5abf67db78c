import './act-environment.js'
import { act, cleanup, renderHook } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { useBranch, useMessageIds } from '../src/index.js'
import { branchedSession, countSubscriptions, memoryStore, user } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

describe('useBranch', () => {
  it('reports index and count, and prev/next move the active leaf to the newest leaf under the sibling', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const { result } = renderHook(
      () => ({
        a1: useBranch(t.session_id, t.a1),
        a1b: useBranch(t.session_id, t.a1b),
        q0: useBranch(t.session_id, t.q0),
        path: useMessageIds({ session_id: t.session_id }),
      }),
      { wrapper: providerOf(store) },
    )
    expect(result.current.path.data).toEqual([t.q0, t.a1b, t.q2b, t.a3b])
    expect(result.current.a1b.data).toMatchObject({ index: 1, count: 2, siblings: [t.a1, t.a1b] })
    expect(result.current.a1.data).toMatchObject({ index: 0, count: 2 })
    expect(result.current.q0.data).toMatchObject({ index: 0, count: 1 })

    await act(() => result.current.a1b.data!.prev())
    expect(result.current.path.data).toEqual([t.q0, t.a1, t.q2x])

    await act(() => result.current.a1.data!.next())
    expect(result.current.path.data).toEqual([t.q0, t.a1b, t.q2b, t.a3b])

    await act(() => result.current.a1b.data!.select(0))
    expect(result.current.path.data).toEqual([t.q0, t.a1, t.q2x])
  })

  it('does nothing at either end, keeps the leaf when selecting the current sibling, rejects an unknown index', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const { result } = renderHook(
      () => ({ a1b: useBranch(t.session_id, t.a1b), path: useMessageIds({ session_id: t.session_id }) }),
      { wrapper: providerOf(store) },
    )
    const path = result.current.path.data
    await act(() => result.current.a1b.data!.next())
    await act(() => result.current.a1b.data!.select(1))
    expect(result.current.path.data).toBe(path)
    await expect(result.current.a1b.data!.select(2)).rejects.toThrow(RangeError)
    await expect(result.current.a1b.data!.select(-1)).rejects.toThrow(RangeError)
  })

  it('sees a new sibling appear, and keeps its object while only content changes', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const { result } = renderHook(() => useBranch(t.session_id, t.q2), { wrapper: providerOf(store) })
    const before = result.current
    expect(before.data).toMatchObject({ index: 0, count: 2 })
    await act(() =>
      store.updateMessage({
        session_id: t.session_id,
        entry_id: t.a3b,
        content: [{ type: 'text', text: 'edited' }],
      }),
    )
    expect(result.current).toBe(before)
    await act(() => store.append({ session_id: t.session_id, parent_id: t.a1, message: user('q2y') }))
    expect(result.current.data).toMatchObject({ index: 0, count: 3 })
  })

  it('an unknown entry is -1 / 0', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const { result } = renderHook(() => useBranch(t.session_id, 'e_nope'), { wrapper: providerOf(store) })
    expect(result.current.data).toMatchObject({ index: -1, count: 0, siblings: [] })
  })

  it('pickers keep their objects while a token streams, and change only when a sibling is added', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const subs = countSubscriptions(store)
    const { result, unmount } = renderHook(
      () => [t.q0, t.a1, t.q2, t.a3, t.a1b, t.q2b, t.a3b].map((id) => useBranch(t.session_id, id)),
      { wrapper: providerOf(store) },
    )
    const before = result.current
    expect(subs.open('branch$')).toBe(7)
    expect(subs.opened('tree$')).toBe(0)
    await act(() =>
      store.updateMessage({
        session_id: t.session_id,
        entry_id: t.a3b,
        content: [{ type: 'text', text: 'streamed' }],
      }),
    )
    await act(() => store.append({ session_id: t.session_id, message: user('more') }))
    expect(result.current.map((b, i) => b === before[i])).toEqual([true, true, true, true, true, true, true])
    // A third answer to q0 changes the two pickers of q0's answers, and only them.
    await act(() => store.append({ session_id: t.session_id, parent_id: t.q0, message: user('third') }))
    expect(result.current.map((b, i) => b === before[i])).toEqual([
      true,
      false,
      true,
      true,
      false,
      true,
      true,
    ])
    expect(result.current[1].data?.count).toBe(3)
    unmount()
    expect(subs.open()).toBe(0)
  })
})
