import type { ReactNode } from 'react'
import { renderToString } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import {
  ColloquyProvider,
  MessageList,
  useBranch,
  useEntry,
  useMessageIds,
  useMessages,
  useObservable,
  useSession,
  useSessions,
  useSyncStatus,
  type LiveState,
  type ObservableLike,
  type SyncStatus,
} from '../src/index.js'
import { countSubscriptions, memoryStore, seedSession } from '../../../test/support/fixtures.js'

const show = (name: string, state: LiveState<unknown>): string => `${name}:${state.status}`

function Everything({ session_id, entry_id }: { session_id: string; entry_id: string }): ReactNode {
  const states = [
    show('sessions', useSessions({ limit: 5 })),
    show('session', useSession(session_id)),
    show('messages', useMessages({ session_id })),
    show('ids', useMessageIds({ session_id })),
    show('entry', useEntry(session_id, entry_id)),
    show('branch', useBranch(session_id, entry_id)),
    show('sync', useSyncStatus()),
  ]
  return <p>{states.join(' ')}</p>
}

const neverEmits: ObservableLike<SyncStatus> = {
  subscribe: () => {
    throw new Error('the server must not subscribe')
  },
}

describe('server rendering (Node, no IndexedDB)', () => {
  it('renders the loading state without a store and without throwing', () => {
    expect(typeof indexedDB).toBe('undefined')
    const html = renderToString(
      <ColloquyProvider store={null}>
        <Everything session_id="s_1" entry_id="e_1" />
      </ColloquyProvider>,
    )
    expect(html).toBe(
      '<p>sessions:loading session:loading messages:loading ids:loading entry:loading branch:loading sync:ready</p>',
    )
  })

  it('renders loading even when given a store holding the data, and opens no subscription', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 3)
    const subs = countSubscriptions(store)
    const html = renderToString(
      <ColloquyProvider store={store} sync={{ status$: neverEmits }}>
        <Everything session_id={session_id} entry_id={ids[0]} />
      </ColloquyProvider>,
    )
    expect(html).toBe(
      '<p>sessions:loading session:loading messages:loading ids:loading entry:loading branch:loading sync:loading</p>',
    )
    expect(subs.opened()).toBe(0)
  })

  it('useObservable renders its initial value', () => {
    const Value = (): ReactNode => <p>{`status=${useObservable(neverEmits, 'unknown')}`}</p>
    expect(renderToString(<Value />)).toBe('<p>status=unknown</p>')
  })

  it('<MessageList> renders its rows on the server as a flat list, with no element of its own', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `e_${i}`)
    const html = renderToString(
      <ol>
        <MessageList ids={ids}>{(id) => <li>{id}</li>}</MessageList>
      </ol>,
    )
    expect(html).toBe(`<ol>${ids.map((id) => `<li>${id}</li>`).join('')}</ol>`)
  })
})
