import { renderToString } from 'vue/server-renderer'
import { createSSRApp, defineComponent, h } from 'vue'
import { describe, expect, it } from 'vitest'
import {
  createColloquy,
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
  type SyncLike,
  type SyncStatus,
} from '../src/index.js'
import type { Store } from '@colloquy/core'
import { countSubscriptions, memoryStore, seedSession } from '../../../test/support/fixtures.js'

const neverSubscribed: ObservableLike<SyncStatus> = {
  subscribe: () => {
    throw new Error('the server must not subscribe')
  },
}

function page(session_id: string, entry_id: string) {
  return defineComponent({
    setup() {
      const states: Array<[string, { value: LiveState<unknown> }]> = [
        ['sessions', useSessions({ limit: 5 })],
        ['session', useSession(session_id)],
        ['messages', useMessages({ session_id })],
        ['ids', useMessageIds({ session_id })],
        ['entry', useEntry(session_id, entry_id)],
        ['branch', useBranch(session_id, entry_id)],
        ['sync', useSyncStatus()],
      ]
      const status = useObservable(neverSubscribed, 'unknown')
      return () =>
        h('p', `${states.map(([name, s]) => `${name}:${s.value.status}`).join(' ')} status=${status.value}`)
    },
  })
}

const render = (
  store: Store | null,
  sync: SyncLike | null,
  session_id = 's_1',
  entry_id = 'e_1',
): Promise<string> => {
  const app = createSSRApp(page(session_id, entry_id))
  app.use(createColloquy({ store, sync }))
  return renderToString(app)
}

describe('server rendering (Node, no IndexedDB)', () => {
  it('renders the loading state without a store and without throwing', async () => {
    expect(typeof indexedDB).toBe('undefined')
    expect(await render(null, null)).toBe(
      '<p>sessions:loading session:loading messages:loading ids:loading entry:loading branch:loading sync:ready status=unknown</p>',
    )
  })

  it('renders loading even when given a store holding the data, and opens no subscription', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 3)
    const subs = countSubscriptions(store)
    const html = await render(store, { status$: neverSubscribed }, session_id, ids[0])
    expect(html).toBe(
      '<p>sessions:loading session:loading messages:loading ids:loading entry:loading branch:loading sync:loading status=unknown</p>',
    )
    expect(subs.opened()).toBe(0)
  })
})
