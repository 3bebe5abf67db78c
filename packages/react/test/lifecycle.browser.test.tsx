import './act-environment.js'
import { act, cleanup, render, renderHook, screen, waitFor } from '@testing-library/react'
import { StrictMode, useState, type ReactNode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { useBranch, useEntry, useMessageIds, useMessages, useSession, useSessions } from '../src/index.js'
import { countSubscriptions, memoryStore, seedSession, textOf } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

describe('subscriptions', () => {
  it('inline argument objects do not resubscribe on re-render', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 4)
    const subs = countSubscriptions(store)
    let renders = 0
    let bump: () => void = () => {}
    const Chat = (): ReactNode => {
      renders++
      const [n, setN] = useState(0)
      bump = () => setN(n + 1)
      // Fresh literals, with keys in a different order on odd renders.
      const request =
        n % 2
          ? { roles: ['user' as const, 'assistant' as const], session_id }
          : { session_id, roles: ['user' as const, 'assistant' as const] }
      const messages = useMessages(request)
      useSessions({ order: 'created_asc', limit: 10 })
      useBranch(session_id, ids[1])
      return <p>{messages.data?.length}</p>
    }
    render(<Chat />, { wrapper: providerOf(store) })
    const opened = subs.opened()
    for (let i = 0; i < 20; i++) act(() => bump())
    expect(renders).toBeGreaterThanOrEqual(21)
    expect(subs.opened()).toBe(opened)
    // messages$, sessions$ and the picker's branch$; nothing watches the raw commit stream.
    expect([
      subs.open('messages$'),
      subs.open('sessions$'),
      subs.open('branch$'),
      subs.open('commits$'),
      subs.open(),
    ]).toEqual([1, 1, 1, 0, 3])
  })

  it('a render that reads without subscribing yet settles: no render loop', async () => {
    const store = await memoryStore()
    const { session_id } = await seedSession(store, 50)
    let renders = 0
    const Chat = (): ReactNode => {
      renders++
      return <p>{useMessages({ session_id }).data?.length}</p>
    }
    render(<Chat />, { wrapper: providerOf(store) })
    expect(screen.getByText('50')).toBeTruthy()
    // A later message renders once more: a loop would have rendered again before it, and after.
    await act(() =>
      store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: 'later' }], timestamp: 1 },
      }),
    )
    await waitFor(() => expect(screen.getByText('51')).toBeTruthy())
    await act(() => store.flush())
    expect(renders).toBe(2)
  })

  it('unmounting closes every subscription', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 4)
    const subs = countSubscriptions(store)
    const { unmount } = renderHook(
      () => [
        useSessions(),
        useSession(session_id),
        useMessages({ session_id }),
        useMessageIds({ session_id }),
        useEntry(session_id, ids[0]),
        useBranch(session_id, ids[0]),
      ],
      { wrapper: providerOf(store) },
    )
    // One live query each (useMessages and useMessageIds are two questions of messages$).
    expect([
      subs.open('sessions$'),
      subs.open('session$'),
      subs.open('messages$'),
      subs.open('entry$'),
      subs.open('branch$'),
      subs.open('commits$'),
      subs.open(),
    ]).toEqual([1, 1, 2, 1, 1, 0, 6])
    unmount()
    expect(subs.open()).toBe(0)
  })

  it('a changed argument closes the old subscription', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 4)
    const subs = countSubscriptions(store)
    const { rerender, result } = renderHook(({ id }) => useEntry(session_id, id), {
      wrapper: providerOf(store),
      initialProps: { id: ids[0] },
    })
    rerender({ id: ids[1] })
    expect(textOf(result.current.data)).toBe('a1')
    await act(() =>
      store.updateMessage({ session_id, entry_id: ids[0], content: [{ type: 'text', text: 'old one' }] }),
    )
    await act(() =>
      store.updateMessage({ session_id, entry_id: ids[1], content: [{ type: 'text', text: 'new one' }] }),
    )
    expect(textOf(result.current.data)).toBe('new one')
    expect(subs.open('entry$')).toBe(1)
  })

  it('works under StrictMode: live, and clean after unmount', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 2)
    const subs = countSubscriptions(store)
    const Row = (): ReactNode => <p data-testid="row">{textOf(useEntry(session_id, ids[1]).data)}</p>
    const Wrapper = providerOf(store)
    const { unmount } = render(
      <StrictMode>
        <Wrapper>
          <Row />
        </Wrapper>
      </StrictMode>,
    )
    expect(screen.getByTestId('row').textContent).toBe('a1')
    expect(subs.open()).toBe(1)
    expect(subs.open('entry$')).toBe(1)
    await act(() =>
      store.updateMessage({ session_id, entry_id: ids[1], content: [{ type: 'text', text: 'strict' }] }),
    )
    expect(screen.getByTestId('row').textContent).toBe('strict')
    unmount()
    expect(subs.open()).toBe(0)
  })
})
