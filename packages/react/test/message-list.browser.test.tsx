import './act-environment.js'
import { act, cleanup, render } from '@testing-library/react'
import { useEffect, useState, type ReactNode } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MessageList, useEntry, useMessageIds } from '../src/index.js'
import { assistant, memoryStore, seedSession, textOf, user } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

const rowsOf = (container: HTMLElement): HTMLElement[] =>
  [...container.querySelector('ol')!.children] as HTMLElement[]

describe('<MessageList>', () => {
  it('renders the rows as a flat list, in order; a streamed token re-renders its row only; an append renders the new row only', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 300)
    const renders = new Map<string, number>()
    let mounts = 0
    const Row = ({ entry_id }: { entry_id: string }): ReactNode => {
      renders.set(entry_id, (renders.get(entry_id) ?? 0) + 1)
      useEffect(() => void mounts++, [])
      return <li data-id={entry_id}>{textOf(useEntry(session_id, entry_id).data)}</li>
    }
    const row = (id: string): ReactNode => <Row entry_id={id} />
    const List = (): ReactNode => {
      const list = useMessageIds({ session_id })
      return <ol>{list.data && <MessageList ids={list.data}>{row}</MessageList>}</ol>
    }
    const Wrapper = providerOf(store)
    const { container } = render(
      <Wrapper>
        <List />
      </Wrapper>,
    )
    // The rows are the <ol>'s own children (no wrapper element per group), in transcript order.
    expect(rowsOf(container).map((li) => li.dataset.id)).toEqual(ids)
    expect(rowsOf(container)[1].textContent).toBe('a1')
    expect(mounts).toBe(300)
    const nodes = rowsOf(container)
    const before = new Map(renders)

    const last = ids.at(-1)!
    let text = ''
    for (let i = 0; i < 50; i++) {
      text += `t${i} `
      await act(() => store.updateMessage({ session_id, entry_id: last, content: [{ type: 'text', text }] }))
    }
    expect(rowsOf(container).at(-1)!.textContent).toBe(text)
    expect(renders.get(last)! - before.get(last)!).toBe(50)
    for (const id of ids.slice(0, -1)) expect(renders.get(id)).toBe(before.get(id))

    const { entry_id: added } = await act(() => store.append({ session_id, message: user('new question') }))
    expect(rowsOf(container).map((li) => li.dataset.id)).toEqual([...ids, added])
    expect(rowsOf(container).at(-1)!.textContent).toBe('new question')
    expect(renders.get(added)).toBe(1)
    // No other row rendered, and every row stays the same DOM node.
    for (const id of ids) expect(renders.get(id)).toBe(before.get(id)! + (id === last ? 50 : 0))
    expect(rowsOf(container).slice(0, 300)).toEqual(nodes)
    expect(mounts).toBe(301)
  })

  it('keeps rows mounted when older ones are prepended or a branch switch replaces the tail', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 400)
    let mounts = 0
    const Row = ({ entry_id }: { entry_id: string }): ReactNode => {
      useEffect(() => void mounts++, [])
      return <li data-id={entry_id}>{textOf(useEntry(session_id, entry_id).data)}</li>
    }
    const row = (id: string): ReactNode => <Row entry_id={id} />
    let show: (ids: readonly string[]) => void = () => {}
    const List = (): ReactNode => {
      const [shown, setShown] = useState<readonly string[]>(ids.slice(200))
      show = setShown
      return (
        <ol>
          <MessageList ids={shown}>{row}</MessageList>
        </ol>
      )
    }
    const Wrapper = providerOf(store)
    const { container } = render(
      <Wrapper>
        <List />
      </Wrapper>,
    )
    expect(rowsOf(container).map((li) => li.dataset.id)).toEqual(ids.slice(200))
    const kept = new Map(rowsOf(container).map((li) => [li.dataset.id, li]))
    mounts = 0

    // "Load older": 200 rows appear above; the shown ones are regrouped only around the seam.
    act(() => show(ids))
    expect(rowsOf(container).map((li) => li.dataset.id)).toEqual(ids)
    const remounted = rowsOf(container)
      .slice(200)
      .filter((li) => kept.get(li.dataset.id) !== li).length
    expect(remounted).toBeLessThanOrEqual(128)
    expect(mounts).toBe(200 + remounted)

    // A branch switch at message 350: the rows before it stay (but for the group at the seam).
    const { entry_id: other } = await store.append({
      session_id,
      parent_id: ids[349],
      message: assistant('other answer'),
    })
    const beforeSwitch = new Map(rowsOf(container).map((li) => [li.dataset.id, li]))
    mounts = 0
    act(() => show([...ids.slice(0, 350), other]))
    expect(rowsOf(container).map((li) => li.dataset.id)).toEqual([...ids.slice(0, 350), other])
    expect(rowsOf(container).at(-1)!.textContent).toBe('other answer')
    const moved = rowsOf(container)
      .slice(0, 350)
      .filter((li) => beforeSwitch.get(li.dataset.id) !== li).length
    expect(moved).toBeLessThanOrEqual(128)
    expect(mounts).toBe(1 + moved)
  })

  it('keeps a key the row gives itself, and renders what a row function returns without one', async () => {
    // React reports a list child without a key on console.error: every row here must have one.
    const errors = vi.spyOn(console, 'error')
    const { container } = render(
      <ul>
        <MessageList ids={['a', 'b', 'c', 'd']}>
          {(id) => (id === 'b' ? `text ${id}` : id === 'd' ? <li>{id}</li> : <li key={`k-${id}`}>{id}</li>)}
        </MessageList>
      </ul>,
    )
    expect(container.querySelector('ul')!.textContent).toBe('atext bcd')
    expect(errors).not.toHaveBeenCalled()
    errors.mockRestore()
  })

  it('a new row function renders every row again with it', async () => {
    let renders = 0
    const Row = ({ id, mark }: { id: string; mark: string }): ReactNode => {
      renders++
      return <li>{`${mark}${id}`}</li>
    }
    const ids = Array.from({ length: 200 }, (_, i) => `e${i}`)
    const List = ({ mark }: { mark: string }): ReactNode => (
      <ul>
        <MessageList ids={ids}>{(id) => <Row id={id} mark={mark} />}</MessageList>
      </ul>
    )
    const { container, rerender } = render(<List mark="a" />)
    expect(container.querySelector('li')!.textContent).toBe('ae0')
    rerender(<List mark="b" />)
    expect([...container.querySelectorAll('li')].every((li, i) => li.textContent === `be${i}`)).toBe(true)
    expect(renders).toBe(400)
  })
})
