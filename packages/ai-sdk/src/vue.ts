import { getCurrentScope, onScopeDispose, shallowRef, type Ref, type ShallowRef } from 'vue'
import type { ChatStatus, UIMessage } from 'ai'
import type { ColloquyChat } from './colloquy-chat.js'

export interface ColloquyChatRefs<M extends UIMessage> {
  /** The active path, re-assigned (not mutated) on every change, as Vue's `shallowRef` wants. */
  messages: Readonly<ShallowRef<M[]>>
  status: Readonly<Ref<ChatStatus>>
  error: Readonly<Ref<Error | undefined>>
  chat: ColloquyChat<M>
  sendMessage: ColloquyChat<M>['sendMessage']
  regenerate: ColloquyChat<M>['regenerate']
  stop: ColloquyChat<M>['stop']
  clearError: ColloquyChat<M>['clearError']
}

/**
 * A `ColloquyChat` as Vue refs: the composable `@ai-sdk/vue` offers for its own `Chat`, over a
 * chat whose state lives in Colloquy. Listening ends with the calling scope.
 */
export function useColloquyChat<M extends UIMessage>(
  chat: ColloquyChat<M>,
  options: { throttleMs?: number } = {},
): ColloquyChatRefs<M> {
  const messages = shallowRef<M[]>(chat.messages)
  const status = shallowRef<ChatStatus>(chat.status)
  const error = shallowRef<Error | undefined>(chat.error)
  const stops = [
    chat['~registerMessagesCallback'](() => (messages.value = chat.messages), options.throttleMs),
    chat['~registerStatusCallback'](() => (status.value = chat.status)),
    chat['~registerErrorCallback'](() => (error.value = chat.error)),
  ]
  // The chat may have loaded between construction and now.
  messages.value = chat.messages
  status.value = chat.status
  if (getCurrentScope()) onScopeDispose(() => stops.forEach((s) => s()))
  return {
    messages,
    status,
    error,
    chat,
    sendMessage: chat.sendMessage,
    regenerate: chat.regenerate,
    stop: chat.stop,
    clearError: chat.clearError,
  }
}
