import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai'
import { tokens, type Gate } from '../../../test/support/streaming.js'

/**
 * A `ChatTransport` streaming `count` text tokens as the SDK's own chunks (start, text-start,
 * text-delta…, finish), held before token `holdAt` while `hold` is closed. `requests` records
 * what the SDK sent, to check the request it builds.
 */
export function tokenTransport(
  count: number,
  options: { hold?: Gate; holdAt?: number; prefix?: () => string } = {},
): ChatTransport<UIMessage> & {
  requests: { trigger: string; messageId: string | undefined; ids: string[] }[]
} {
  const requests: { trigger: string; messageId: string | undefined; ids: string[] }[] = []
  return {
    requests,
    async sendMessages({ trigger, messageId, messages, abortSignal }) {
      requests.push({ trigger, messageId, ids: messages.map((m) => m.id) })
      const prefix = options.prefix?.() ?? 't'
      const source = tokens(count, {
        hold: options.hold,
        holdAt: options.holdAt,
        signal: abortSignal,
        prefix,
      })
      let sent = ''
      let phase: 'head' | 'body' | 'done' = 'head'
      return new ReadableStream<UIMessageChunk>({
        async pull(controller) {
          if (phase === 'head') {
            controller.enqueue({ type: 'start' })
            controller.enqueue({ type: 'start-step' })
            controller.enqueue({ type: 'text-start', id: 'txt' })
            phase = 'body'
            return
          }
          const next = await source.next()
          if (next.done || abortSignal?.aborted) {
            if (phase !== 'done') {
              controller.enqueue({ type: 'text-end', id: 'txt' })
              controller.enqueue({ type: 'finish-step' })
              controller.enqueue({ type: 'finish' })
              phase = 'done'
            }
            controller.close()
            return
          }
          controller.enqueue({ type: 'text-delta', id: 'txt', delta: next.value.slice(sent.length) })
          sent = next.value
        },
      })
    },
    async reconnectToStream() {
      return null
    },
  }
}
