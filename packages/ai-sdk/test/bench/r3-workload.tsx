import { memo, useLayoutEffect, type ReactNode } from 'react'
import { createRoot } from 'react-dom/client'
import { Chat, useChat } from '@ai-sdk/react'
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai'
import { ColloquyChat } from '../../src/index.js'
import type { BenchContext, Workload } from '../../../../test/bench/types.js'
import {
  chunkText,
  measureR3,
  mounting,
  r3,
  r3Rows,
  r3Store,
  r3Texts,
  R3_MESSAGES,
  timedPass,
  type R3Pass,
} from '../../../../test/bench/subjects/r3.js'

const textOf = (m: UIMessage): string => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')

/** A memoized row, as useChat apps write them; the streaming one reports what it committed. */
const Row = memo(function Row({ message, last }: { message: UIMessage; last: boolean }): ReactNode {
  r3.renders++
  const text = textOf(message)
  useLayoutEffect(() => {
    if (last) r3.shown(text)
  }, [text, last])
  return <p>{text}</p>
})

function View({ chat }: { chat: Chat<UIMessage> }): ReactNode {
  const { messages } = useChat({ chat })
  return messages.map((m, i) => <Row key={m.id} message={m} last={i === messages.length - 1} />)
}

/** Streams `chunks` text deltas, each once the previous text is on screen. */
function streamingTransport(chunks: number): ChatTransport<UIMessage> {
  return {
    async sendMessages() {
      let i = -1
      return new ReadableStream<UIMessageChunk>({
        async pull(controller) {
          if (i === -1) {
            controller.enqueue({ type: 'start' })
            controller.enqueue({ type: 'text-start', id: 't' })
            i = 0
            return
          }
          if (i === chunks) {
            controller.enqueue({ type: 'text-end', id: 't' })
            controller.enqueue({ type: 'finish' })
            controller.close()
            return
          }
          const shown = r3.until(chunkText(i))
          controller.enqueue({ type: 'text-delta', id: 't', delta: `tok${i} ` })
          i++
          await shown
        },
      })
    },
    async reconnectToStream() {
      return null
    },
  }
}

async function stream(chat: Chat<UIMessage>): Promise<R3Pass> {
  const root = createRoot(document.createElement('div'))
  root.render(<View chat={chat} />)
  await mounting('the chat', () => chat.messages.length === R3_MESSAGES - 2)
  await new Promise((r) => setTimeout(r, 50))
  const result = await timedPass(() => chat.sendMessage({ text: 'go' }))
  root.unmount()
  return result
}

/** The chat holds 998 messages; the question and the streamed reply make 1,000. */
async function colloquyPass(ctx: BenchContext, chunks: number): Promise<R3Pass> {
  const { store, session_id } = await r3Store(ctx, 'r3-ai-sdk')
  const chat = new ColloquyChat({ store, session_id, transport: streamingTransport(chunks) })
  await chat.ready
  const result = await stream(chat as unknown as Chat<UIMessage>)
  await chat.flush()
  chat.close()
  await store.close()
  return result
}

async function memoryPass(chunks: number): Promise<R3Pass> {
  const messages: UIMessage[] = r3Texts().map(({ id, role, text }) => ({
    id,
    role,
    parts: [{ type: 'text', text }],
  }))
  return stream(new Chat({ messages, transport: streamingTransport(chunks) }))
}

const COLLOQUY = 'colloquy ColloquyChat'
const MEMORY = 'AI SDK Chat'

const workload: Workload = {
  id: 'R3',
  title:
    'AI SDK: 1,000 chunks into the last of 1,000 messages, useChat over ColloquyChat (IndexedDB) vs the SDK Chat (memory)',
  env: 'browser',
  async run(ctx) {
    const runs = await measureR3(
      { [COLLOQUY]: (n: number) => colloquyPass(ctx, n), [MEMORY]: memoryPass },
      (m) => ctx.log(m),
    )
    return r3Rows(
      'AI SDK 6 useChat',
      COLLOQUY,
      MEMORY,
      runs,
      'Colloquy persists the streaming reply to IndexedDB (updateMessage, at most once per 16 ms frame); the write time after the last chunk is not counted (chat.flush)',
    )
  },
}

export default workload
