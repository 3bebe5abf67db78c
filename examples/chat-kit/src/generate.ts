import { SessionError, type ContentBlock, type Store } from '@colloquy/core'
import { disownReply, ownReply, replyEnding, replyLock } from '@colloquy/parts'
import { LOCAL_MODEL, replySteps, tokensOf, type ModelInput } from './model.js'

export interface GenerateOptions {
  /** Pause between tokens, in ms: long enough to watch the reply stream. */
  delayMs?: number
  signal?: AbortSignal
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Held while a tab streams into a session, so other tabs can tell a live reply from an orphaned one. */
export { replyLock }

const withLock = <T>(name: string, run: () => Promise<T>): Promise<T> =>
  // The lock is held until run's promise settles, and request() resolves with what run resolved.
  typeof navigator !== 'undefined' && navigator.locks
    ? (navigator.locks.request(name, run) as unknown as Promise<T>)
    : run()

/**
 * Streams a local-model reply under `parent_id`: an empty assistant message first (the UI shows it
 * at once), then one `updateMessage` per token, with the session `working` meanwhile and `done`
 * after. Resolves with the reply's entry id once it is complete or stopped.
 */
export function generateReply(
  store: Store,
  at: { session_id: string; parent_id: string },
  input: ModelInput,
  options: GenerateOptions = {},
): Promise<string | null> {
  const { session_id, parent_id } = at
  const delay = options.delayMs ?? 24
  return withLock(replyLock(session_id), async () => {
    // The reply so far, to record on it how it ended if a write fails.
    let reply: { entry_id: string; content: ContentBlock[] } | null = null
    try {
      // Told apart from another device's reply by the tabs of this browser, should this one close.
      ownReply(store, session_id)
      await store.setStatus({ session_id, status: 'working', reason: 'replying' })
      const { entry_id } = await store.append({
        session_id,
        parent_id,
        message: {
          role: 'assistant',
          content: [],
          stop_reason: 'end',
          timestamp: Date.now(),
          ...LOCAL_MODEL,
        },
      })
      reply = { entry_id, content: [] }
      let output = 0
      for (const content of replySteps(input)) {
        if (options.signal?.aborted) break
        await store.updateMessage({ session_id, entry_id, content })
        reply.content = content
        output++
        await sleep(delay)
      }
      const stopped = options.signal?.aborted === true
      const last = await store.getMessage({ session_id, entry_id })
      if (last?.entry.kind === 'message') {
        const usage = { input: tokensOf(input.prompt).length, output }
        // A stopped reply says so on its message too: the session tells only of its newest reply.
        await store.updateMessage({
          session_id,
          entry_id,
          content: last.entry.message.content,
          usage,
          ...replyEnding({ stopped }),
        })
      }
      await store.setStatus({ session_id, status: 'done', reason: stopped ? 'stopped' : null })
      return entry_id
    } catch (e) {
      // The session was deleted mid-reply (here or in another tab): nothing is left to report to.
      if (e instanceof SessionError && e.code === 'session/not_found') return null
      if (reply)
        await store.updateMessage({ session_id, ...reply, ...replyEnding({ error: e }) }).catch(() => {})
      await store
        .setStatus({ session_id, status: 'error', reason: e instanceof Error ? e.message : String(e) })
        .catch(() => {})
      throw e
    } finally {
      disownReply(store, session_id)
    }
  })
}
