import type { Chat } from 'chat-kit'
import { inject, shallowRef, type InjectionKey, type Plugin, type ShallowRef } from 'vue'

interface ChatContext {
  chat: Chat
  /** Runs an action in the background; a failure becomes the notice instead of an unhandled rejection. */
  run<T>(action: Promise<T>): Promise<T | undefined>
  notice: ShallowRef<string | null>
}

const KEY: InjectionKey<ChatContext> = Symbol('chat')

/** `app.use(chatActions(chat))`: the actions, and one notice for whichever of them failed last. */
export function chatActions(chat: Chat): Plugin {
  const notice = shallowRef<string | null>(null)
  const run = <T>(action: Promise<T>): Promise<T | undefined> =>
    action.catch((e: unknown) => {
      notice.value = e instanceof Error ? e.message : String(e)
      return undefined
    })
  return { install: (app) => void app.provide(KEY, { chat, run, notice }) }
}

export function useChat(): ChatContext {
  const context = inject(KEY)
  if (!context) throw new Error('no chat provided')
  return context
}
