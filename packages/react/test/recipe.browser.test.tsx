import './act-environment.js'
import {
  createStore,
  indexedDbStorage,
  type ContentBlock,
  type FunctionCallBlock,
  type Store,
  type TextBlock,
} from '@colloquy/core'
import { updateMessage } from '@colloquy/core/recipe'
import { act, cleanup, render, screen } from '@testing-library/react'
import { memo, type ReactNode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { useEntry } from '../src/index.js'
import { providerOf } from './wrapper.js'

const names: string[] = []
const stores: Store[] = []
afterEach(async () => {
  cleanup()
  for (const s of stores.splice(0)) await s.close()
  for (const n of names.splice(0)) indexedDB.deleteDatabase(n)
})

const call: FunctionCallBlock = {
  type: 'function_call',
  id: 'call_1',
  function_id: 'get_weather',
  arguments: { city: 'Oslo' },
}

describe('streaming with a recipe beside a tool call', () => {
  it('the tool-call card does not re-render while the text beside it streams (IndexedDB); rebuilt content would re-render it', async () => {
    const name = `recipe-react-${crypto.randomUUID()}`
    names.push(name)
    const store = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
    stores.push(store)
    const { session_id } = await store.create({})
    const { entry_id } = await store.append({
      session_id,
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: '' }, call],
        stop_reason: 'function_call',
        model: 'm',
        provider: 'p',
        timestamp: 1,
      },
    })

    let cardRenders = 0
    let textRenders = 0
    const ToolCallCard = memo(function ToolCallCard({ block }: { block: FunctionCallBlock }): ReactNode {
      cardRenders++
      return <pre data-testid="card">{`${block.function_id}(${JSON.stringify(block.arguments)})`}</pre>
    })
    const TextPart = memo(function TextPart({ block }: { block: TextBlock }): ReactNode {
      textRenders++
      return <p data-testid="text">{block.text}</p>
    })
    const Message = (): ReactNode => {
      const entry = useEntry(session_id, entry_id).data
      if (entry?.kind !== 'message') return null
      return entry.message.content.map((b, i) =>
        b.type === 'function_call' ? (
          <ToolCallCard key={i} block={b} />
        ) : b.type === 'text' ? (
          <TextPart key={i} block={b} />
        ) : null,
      )
    }
    const Wrapper = providerOf(store)
    render(
      <Wrapper>
        <Message />
      </Wrapper>,
    )
    await act(() => store.flush())
    expect(screen.getByTestId('card').textContent).toBe('get_weather({"city":"Oslo"})')
    const cardAtMount = cardRenders
    const textAtMount = textRenders

    let want = ''
    for (let i = 0; i < 30; i++) {
      want += `tok${i} `
      await act(() =>
        updateMessage(
          store,
          { session_id, entry_id },
          (draft) => void ((draft[0] as TextBlock).text += `tok${i} `),
        ),
      )
    }
    expect(screen.getByTestId('text').textContent).toBe(want)
    expect(textRenders - textAtMount).toBe(30)
    expect(cardRenders).toBe(cardAtMount)

    // The same stream written as whole new content (what updateMessage takes): every block is a
    // new object, so the card re-renders with every token.
    const rebuilt = (text: string): ContentBlock[] => [
      { type: 'text', text },
      { ...call, arguments: { city: 'Oslo' } },
    ]
    for (let i = 0; i < 5; i++) {
      want += `x${i} `
      await act(() => store.updateMessage({ session_id, entry_id, content: rebuilt(want) }))
    }
    expect(screen.getByTestId('text').textContent).toBe(want)
    expect(cardRenders - cardAtMount).toBe(5)
  })
})
