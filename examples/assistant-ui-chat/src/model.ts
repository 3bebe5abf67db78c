import { firstValueFrom } from 'rxjs'
import type { Store } from '@colloquy/core'
import { blocksToParts } from '@colloquy/parts'
import { toThreadMessageLike } from '@colloquy/assistant-ui'
import type { ChatModelAdapter, ChatModelRunResult, ThreadMessage } from '@assistant-ui/react'
import { loadEndpoint, replySteps, streamCompletion, type CompletionMessage } from 'chat-kit'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const textOf = (m: ThreadMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('')

/**
 * The app's model, as assistant-ui wants one: the OpenAI-compatible endpoint set in Settings, or
 * else the demo's deterministic local model (no network, no key), streamed token by token.
 */
export function chatModel(store: Store, delayMs = 24): ChatModelAdapter {
  return {
    async *run({
      messages,
      abortSignal,
      unstable_threadId,
      unstable_assistantMessageId,
    }): AsyncGenerator<ChatModelRunResult> {
      const endpoint = loadEndpoint()
      if (endpoint) {
        const history: CompletionMessage[] = messages.map((m) => ({ role: m.role, content: textOf(m) }))
        let text = ''
        let reasoning = ''
        for await (const d of streamCompletion(endpoint, history, abortSignal)) {
          text += d.text ?? ''
          reasoning += d.reasoning ?? ''
          yield {
            content: [
              ...(reasoning ? [{ type: 'reasoning' as const, text: reasoning }] : []),
              ...(text ? [{ type: 'text' as const, text }] : []),
            ],
          }
        }
        return
      }
      const prompt = [...messages].reverse().find((m) => m.role === 'user')
      // The n-th reply to a prompt is variant n: regenerating gives a fresh take, still reproducible.
      let variant = 0
      if (unstable_threadId && unstable_assistantMessageId) {
        const tree = await firstValueFrom(store.tree$(unstable_threadId))
        const parent = tree?.entries.get(unstable_assistantMessageId)?.parent_id
        variant = Math.max(0, (tree?.children.get(parent ?? null) ?? []).indexOf(unstable_assistantMessageId))
      }
      const input = {
        prompt: prompt ? textOf(prompt) : '',
        variant,
        now: prompt?.createdAt.getTime() ?? Date.now(),
      }
      for (const blocks of replySteps(input)) {
        if (abortSignal.aborted) return
        const like = toThreadMessageLike({
          id: '',
          role: 'assistant',
          parts: blocksToParts(blocks),
          entries: [],
        })
        yield { content: like.content as ChatModelRunResult['content'] }
        await sleep(delayMs)
      }
    },
  }
}
