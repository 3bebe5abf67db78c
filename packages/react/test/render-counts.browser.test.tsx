import './act-environment.js'
import type { MessageItem } from '@colloquy/core'
import { act, cleanup, render, screen } from '@testing-library/react'
import { memo, Profiler, type ReactNode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { useEntry, useMessageIds, useMessages } from '../src/index.js'
import { countSubscriptions, memoryStore, seedSession, textOf } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

const UPDATES = 200

describe('re-render granularity', () => {
  it('streaming 200 updates into one message re-renders that row only (ids list + useEntry rows)', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 20)
    const last = ids.at(-1)!
    const rowRenders = new Map<string, number>()
    let listRenders = 0
    const commits: string[] = []

    const Row = ({ entry_id }: { entry_id: string }): ReactNode => {
      rowRenders.set(entry_id, (rowRenders.get(entry_id) ?? 0) + 1)
      return <p data-testid={entry_id}>{textOf(useEntry(session_id, entry_id).data)}</p>
    }
    const List = (): ReactNode => {
      listRenders++
      const ids = useMessageIds({ session_id })
      return (
        <div>
          {ids.data?.map((id) => (
            <Row key={id} entry_id={id} />
          ))}
        </div>
      )
    }
    const Wrapper = providerOf(store)
    render(
      <Profiler id="chat" onRender={(_id, phase) => commits.push(phase)}>
        <Wrapper>
          <List />
        </Wrapper>
      </Profiler>,
    )
    expect(screen.getByTestId(last).textContent).toBe('a19')
    const rowsAtMount = new Map(rowRenders)
    const listAtMount = listRenders
    const commitsAtMount = commits.length
    const subs = countSubscriptions(store)

    let text = ''
    for (let i = 0; i < UPDATES; i++) {
      text += `t${i} `
      await act(() => store.updateMessage({ session_id, entry_id: last, content: [{ type: 'text', text }] }))
    }

    expect(screen.getByTestId(last).textContent).toBe(text)
    expect(rowRenders.get(last)! - rowsAtMount.get(last)!).toBe(UPDATES)
    for (const id of ids.slice(0, -1)) expect(rowRenders.get(id)).toBe(rowsAtMount.get(id))
    expect(listRenders).toBe(listAtMount)
    // One commit per update, each an update of the streaming row alone.
    expect(commits.length - commitsAtMount).toBe(UPDATES)
    expect(commits.slice(commitsAtMount).every((p) => p === 'update')).toBe(true)
    // The rows' live queries stay open and core routes each update to its entry: nothing reopens.
    expect(subs.opened()).toBe(0)
  })

  it('with useMessages and memoized rows, siblings skip while the list itself re-renders', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 20)
    const last = ids.at(-1)!
    const rowRenders = new Map<string, number>()
    let listRenders = 0
    const Row = memo(({ item }: { item: MessageItem }): ReactNode => {
      rowRenders.set(item.entry_id, (rowRenders.get(item.entry_id) ?? 0) + 1)
      return <p>{item.message?.content.map((b) => (b.type === 'text' ? b.text : '')).join('')}</p>
    })
    const List = (): ReactNode => {
      listRenders++
      return (
        <div>
          {useMessages({ session_id }).data?.map((item) => (
            <Row key={item.entry_id} item={item} />
          ))}
        </div>
      )
    }
    const Wrapper = providerOf(store)
    render(
      <Wrapper>
        <List />
      </Wrapper>,
    )
    const listAtMount = listRenders
    for (let i = 0; i < UPDATES; i++) {
      await act(() =>
        store.updateMessage({ session_id, entry_id: last, content: [{ type: 'text', text: `v${i}` }] }),
      )
    }
    expect(rowRenders.get(last)).toBe(1 + UPDATES)
    for (const id of ids.slice(0, -1)) expect(rowRenders.get(id)).toBe(1)
    expect(listRenders - listAtMount).toBe(UPDATES)
  })
})
