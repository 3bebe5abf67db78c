import { firstValueFrom } from 'rxjs'
import type { AgentMessage, AttachmentMeta, ContentBlock, SessionEntry, Store } from '@colloquy/core'
import { createThread, recoverInterrupted, stopReply, THREAD_ROOT, watchReplies } from '@colloquy/parts'
import { generateReply, type GenerateOptions } from './generate.js'
import { displayTitle, messageText, titleFrom } from './text.js'

/**
 * Every session starts with this hidden custom entry (`@colloquy/parts` defines it: the framework
 * adapters start their sessions the same way, so all the apps open each other's chats).
 */
export { THREAD_ROOT }

/** What the demo apps do to a store, whatever their framework. */
export interface Chat {
  /** A new, untitled session; resolves with its id. */
  create(): Promise<string>
  /**
   * Appends a user message on the active branch (its text and the attached files: images as
   * image blocks linked to their stored original, other files as file blocks) and streams the
   * reply; the composer's draft is cleared with it.
   */
  send(session_id: string, text: string, attachments?: readonly AttachmentMeta[]): Promise<void>
  /** A new user message beside `entry_id` (a sibling branch), then its reply. */
  edit(session_id: string, entry_id: string, text: string): Promise<void>
  /** A new reply beside the assistant message `entry_id`. */
  regenerate(session_id: string, entry_id: string): Promise<void>
  /** Copies the path up to `entry_id` into a new session; resolves with its id. */
  fork(session_id: string, entry_id: string): Promise<string>
  rename(session_id: string, title: string): Promise<void>
  remove(session_id: string): Promise<void>
  /** Stops the reply streaming into the session, whichever tab of the app writes it. */
  stop(session_id: string): void
  /** Marks sessions left `working` by a tab that closed mid-reply as interrupted. */
  recoverInterrupted(): Promise<void>
}

/** An attachment as the block a message carries; an image's bytes stay in the attachment store. */
export const attachmentBlock = (a: AttachmentMeta): ContentBlock =>
  /^image\//.test(a.mime)
    ? { type: 'image', mime: a.mime, data: '', attachment_id: a.attachment_id }
    : { type: 'file', attachment_id: a.attachment_id, name: a.name, mime: a.mime, size: a.size }

const user = (
  text: string,
  timestamp: number,
  attachments: readonly AttachmentMeta[] = [],
): AgentMessage => ({
  role: 'user',
  content: [...(text.trim() ? [{ type: 'text' as const, text }] : []), ...attachments.map(attachmentBlock)],
  timestamp,
})

/** Copies the path up to `entry_id` into a new session titled "… (fork)"; resolves with its id. */
export async function forkChat(store: Store, session_id: string, entry_id: string): Promise<string> {
  const meta = (await store.get({ session_id }))?.meta
  const forked = await store.fork({ session_id, entry_id, title: `${displayTitle(meta?.title)} (fork)` })
  return forked.session_id
}

export function createChat(store: Store, options: Omit<GenerateOptions, 'signal'> = {}): Chat {
  const running = new Map<string, AbortController>()
  // A reply streams from the tab that asked for it; Stop may be pressed in any tab.
  const stops =
    typeof BroadcastChannel !== 'undefined'
      ? new BroadcastChannel(`colloquy-chat-stop:${store.storage.name}`)
      : null
  stops?.addEventListener('message', (e: MessageEvent<string>) => running.get(e.data)?.abort())
  // A reply cut off by a closed tab is marked interrupted as soon as that tab's lock goes.
  watchReplies(store)

  const entry = async (session_id: string, entry_id: string): Promise<SessionEntry> => {
    const found = await store.getMessage({ session_id, entry_id })
    if (!found) throw new Error(`message ${entry_id} is gone`)
    return found.entry
  }

  /** The user message a reply under `entry_id` answers: the entry itself or its nearest user ancestor. */
  const promptAt = async (
    session_id: string,
    entry_id: string,
  ): Promise<{ text: string; timestamp: number }> => {
    for (let id: string | null = entry_id; id !== null;) {
      const e = await entry(session_id, id)
      if (e.kind === 'message' && e.message.role === 'user')
        return { text: messageText(e.message), timestamp: e.message.timestamp }
      id = e.parent_id
    }
    return { text: '', timestamp: Date.now() }
  }

  const reply = async (session_id: string, parent_id: string, variant: number): Promise<void> => {
    if (running.has(session_id)) throw new Error('a reply is still streaming in this chat')
    const controller = new AbortController()
    running.set(session_id, controller)
    try {
      const prompt = await promptAt(session_id, parent_id)
      await generateReply(
        store,
        { session_id, parent_id },
        { prompt: prompt.text, variant, now: prompt.timestamp },
        { ...options, signal: controller.signal },
      )
    } finally {
      running.delete(session_id)
    }
  }

  const ask = async (
    session_id: string,
    text: string,
    parent_id?: string,
    attachments: readonly AttachmentMeta[] = [],
  ): Promise<void> => {
    const meta = (await store.get({ session_id }))?.meta
    if (!meta) throw new Error('this chat no longer exists')
    const title = text.trim() || attachments[0]?.name || ''
    if (!meta.title.trim() && title) await store.setMeta({ session_id, title: titleFrom(title) })
    const { entry_id } = await store.append({
      session_id,
      parent_id,
      message: user(text, Date.now(), attachments),
    })
    // Sent: the draft (text and chips) is done with. The chips' attachments stay, now referenced.
    if (attachments.length || meta.draft !== undefined)
      await store.setDraft({ session_id, draft: null, attachment_ids: [] })
    await reply(session_id, entry_id, 0)
  }

  return {
    create: () => createThread(store),
    async send(session_id, text, attachments = []) {
      if (text.trim() || attachments.length) await ask(session_id, text, undefined, attachments)
    },
    async edit(session_id, entry_id, text) {
      if (!text.trim()) return
      const { parent_id } = await entry(session_id, entry_id)
      if (parent_id === null)
        throw new Error('the first message of a chat made elsewhere cannot be edited into a branch')
      await ask(session_id, text, parent_id)
    },
    async regenerate(session_id, entry_id) {
      const { parent_id } = await entry(session_id, entry_id)
      if (parent_id === null) throw new Error('this message answers nothing to regenerate from')
      const tree = await firstValueFrom(store.tree$(session_id))
      // The n-th reply to a prompt is variant n: a fresh take, still reproducible.
      await reply(session_id, parent_id, tree?.children.get(parent_id)?.length ?? 1)
    },
    fork: (session_id, entry_id) => forkChat(store, session_id, entry_id),
    async rename(session_id, title) {
      await store.setMeta({ session_id, title: title.trim() })
    },
    async remove(session_id) {
      running.get(session_id)?.abort()
      await store.delete({ session_id })
    },
    stop(session_id) {
      running.get(session_id)?.abort()
      // Tells the writing tab over `stops`' channel; a reply whose writer is gone is marked interrupted.
      stopReply(store, session_id)
    },
    async recoverInterrupted() {
      await recoverInterrupted(store)
    },
  }
}
