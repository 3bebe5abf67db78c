import type { Chat } from 'chat-kit'
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'

interface ChatContextValue {
  chat: Chat
  /** Runs an action in the background; a failure becomes a notice instead of an unhandled rejection. */
  run<T>(action: Promise<T>): Promise<T | undefined>
  notice: string | null
  /** Shows a failure as a notice. */
  report(message: string): void
  dismiss(): void
}

const ChatContext = createContext<ChatContextValue | null>(null)

export function ChatProvider({ chat, children }: { chat: Chat; children: ReactNode }): ReactNode {
  const [notice, setNotice] = useState<string | null>(null)
  const run = useCallback(
    <T,>(action: Promise<T>): Promise<T | undefined> =>
      action.catch((e: unknown) => {
        setNotice(e instanceof Error ? e.message : String(e))
        return undefined
      }),
    [],
  )
  const value = useMemo(
    () => ({ chat, run, notice, report: setNotice, dismiss: () => setNotice(null) }),
    [chat, run, notice],
  )
  return <ChatContext.Provider value={value}>{children}</ChatContext.Provider>
}

export function useChat(): ChatContextValue {
  const value = useContext(ChatContext)
  if (!value) throw new Error('no <ChatProvider> above this component')
  return value
}
