import './act-environment.js'
import { act, type ReactNode } from 'react'
import { hydrateRoot } from 'react-dom/client'
import { renderToString } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import { ColloquyProvider, useMessages } from '../src/index.js'
import { memoryStore, seedSession } from '../../../test/support/fixtures.js'
import type { Store } from '@colloquy/core'

function Count({ session_id }: { session_id: string }): ReactNode {
  const messages = useMessages({ session_id })
  return <p>{messages.status === 'ready' ? `${messages.data.length} messages` : 'loading'}</p>
}

const app = (store: Store | null, session_id: string): ReactNode => (
  <ColloquyProvider store={store}>
    <Count session_id={session_id} />
  </ColloquyProvider>
)

describe('hydration', () => {
  it('hydrates the server markup without a mismatch, then shows live data', async () => {
    const store = await memoryStore()
    const { session_id } = await seedSession(store, 3)
    const container = document.createElement('div')
    container.innerHTML = renderToString(app(null, session_id))
    expect(container.textContent).toBe('loading')
    const recoverable: unknown[] = []
    const root = await act(async () =>
      hydrateRoot(container, app(store, session_id), { onRecoverableError: (e) => recoverable.push(e) }),
    )
    expect(recoverable).toEqual([])
    expect(container.textContent).toBe('3 messages')
    act(() => root.unmount())
  })
})
