import { firstValueFrom } from 'rxjs'
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai'
import type { ContentBlock, Store } from '@colloquy/core'
import { loadEndpoint, replySteps, streamCompletion, textOf, type CompletionMessage } from 'chat-kit'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const textOfMessage = (m: UIMessage): string => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')

/** The chunks that turn snapshot `prev` of a reply into snapshot `next`, as a route would stream them. */
function* chunksBetween(
  prev: readonly ContentBlock[],
  next: readonly ContentBlock[],
): Generator<UIMessageChunk> {
  for (let i = 0; i < next.length; i++) {
    const b = next[i]
    const old = prev[i]
    const id = `p${i}`
    if (old) {
      if (
        (b.type === 'text' || b.type === 'thinking') &&
        old.type === b.type &&
        b.text.length > old.text.length
      ) {
        yield {
          type: b.type === 'text' ? 'text-delta' : 'reasoning-delta',
          id,
          delta: b.text.slice(old.text.length),
        }
      }
      continue
    }
    // A new block: the text streaming before it is complete.
    const before = next[i - 1]
    if (before && (before.type === 'text' || before.type === 'thinking'))
      yield { type: before.type === 'text' ? 'text-end' : 'reasoning-end', id: `p${i - 1}` }
    if (b.type === 'text' || b.type === 'thinking') {
      yield { type: b.type === 'text' ? 'text-start' : 'reasoning-start', id }
      yield { type: b.type === 'text' ? 'text-delta' : 'reasoning-delta', id, delta: b.text }
    } else if (b.type === 'function_call')
      yield { type: 'tool-input-available', toolCallId: b.id, toolName: b.function_id, input: b.arguments }
    else if (b.type === 'function_result') {
      yield b.is_error
        ? { type: 'tool-output-error', toolCallId: b.function_call_id, errorText: textOf(b.content) }
        : { type: 'tool-output-available', toolCallId: b.function_call_id, output: textOf(b.content) }
    } else if (b.type === 'image')
      yield { type: 'file', url: `data:${b.mime};base64,${b.data}`, mediaType: b.mime }
  }
}

/** A stream of chunks from an async source, stopping when the request is aborted. */
function streamOf(
  source: AsyncIterable<UIMessageChunk>,
  signal: AbortSignal | undefined,
): ReadableStream<UIMessageChunk> {
  const it = source[Symbol.asyncIterator]()
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      const next = signal?.aborted ? { done: true as const, value: undefined } : await it.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await it.return?.()
    },
  })
}

/**
 * The app's transport: the OpenAI-compatible endpoint set in Settings, or else the demo's
 * deterministic local model, streamed as the AI SDK's UI message chunks (what a route sends).
 */
export function appTransport(store: Store, delayMs = 24): ChatTransport<UIMessage> {
  return {
    async sendMessages({ chatId, messages, abortSignal }) {
      const endpoint = loadEndpoint()
      if (endpoint) {
        const history: CompletionMessage[] = messages.map((m) => ({
          role: m.role,
          content: textOfMessage(m),
        }))
        return streamOf(
          (async function* () {
            yield { type: 'start' }
            yield { type: 'start-step' }
            let open: 'text' | 'reasoning' | null = null
            for await (const d of streamCompletion(endpoint, history, abortSignal)) {
              const kind = d.reasoning ? 'reasoning' : 'text'
              if (open !== kind) {
                if (open) yield { type: `${open}-end`, id: open }
                yield { type: `${kind}-start`, id: kind }
                open = kind
              }
              yield { type: `${kind}-delta`, id: kind, delta: (d.reasoning ?? d.text)! }
            }
            if (open) yield { type: `${open}-end`, id: open }
            yield { type: 'finish-step' }
            yield { type: 'finish' }
          })() as AsyncIterable<UIMessageChunk>,
          abortSignal,
        )
      }
      const prompt = [...messages].reverse().find((m) => m.role === 'user')
      // The n-th reply to a prompt is variant n: regenerating gives a fresh take, still reproducible.
      const tree = prompt ? await firstValueFrom(store.tree$(chatId)) : null
      const replies = (tree?.children.get(prompt!.id) ?? []).filter((id) => {
        const e = tree!.entries.get(id)
        return e?.kind === 'message' && e.message.role === 'assistant'
      })
      const entry = prompt ? tree?.entries.get(prompt.id) : undefined
      const input = {
        prompt: prompt ? textOfMessage(prompt) : '',
        variant: replies.length,
        now: entry?.kind === 'message' ? entry.message.timestamp : Date.now(),
      }
      return streamOf(
        (async function* () {
          yield { type: 'start' }
          yield { type: 'start-step' }
          let prev: ContentBlock[] = []
          for (const next of replySteps(input)) {
            yield* chunksBetween(prev, next)
            prev = next
            await sleep(delayMs)
          }
          const last = prev.at(-1)
          if (last && (last.type === 'text' || last.type === 'thinking'))
            yield { type: last.type === 'text' ? 'text-end' : 'reasoning-end', id: `p${prev.length - 1}` }
          yield { type: 'finish-step' }
          yield { type: 'finish' }
        })() as AsyncIterable<UIMessageChunk>,
        abortSignal,
      )
    },
    async reconnectToStream() {
      return null
    },
  }
}
