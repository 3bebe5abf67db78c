import { useEffect, useMemo, useRef } from 'react'
import { firstValueFrom } from 'rxjs'
import type { SessionMeta, SessionTree, Store } from '@colloquy/core'
import { useObservable, useSession, useStore } from '@colloquy/react'
import {
  createThread, foldTree, titleFrom, textOf, splitParts, startReply, stopReply, watchReplies, STOPPED_REASON,
  type ChatNode, type ChatTree, type NeutralPart,
} from '@colloquy/parts'
import {
  useExternalStoreRuntime,
  type AppendMessage, type AttachmentAdapter, type AssistantRuntime, type ChatModelAdapter, type ChatModelRunResult,
  type ExportedMessageRepository, type MessageStatus, type ThreadMessage,
} from '@assistant-ui/react'
import { fromPart, partsFromThreadMessage, toThreadMessage } from './mapping.js'
import { useThreadListAdapter } from './thread-list.js'

export interface ColloquyRuntimeOptions {
  /** The open session; `null` before any is chosen (the first message then creates one). */
  session_id: string | null
  /** Called when the runtime opens another session: thread-list switch, new thread, first message. */
  onSessionChange?: (session_id: string | null) => void
  /** The app's model, in the shape of assistant-ui's `ChatModelAdapter`: yields cumulative snapshots. */
  model: ChatModelAdapter
  /** Stored on each reply's entry. */
  modelName?: { model: string; provider: string }
  /**
   * assistant-ui's attachment adapter, for the composer's attach button and pasted files: what
   * its `send` returns becomes the user message's blocks (a `file` part whose `providerMetadata`
   * carries `{ colloquy: { kind: 'file', attachmentId } }` references a stored attachment).
   */
  attachments?: AttachmentAdapter
}

const RUNNING: MessageStatus = { type: 'running' }
const COMPLETE: MessageStatus = { type: 'complete', reason: 'unknown' }
const CANCELLED: MessageStatus = { type: 'incomplete', reason: 'cancelled' }

/** The last reply's status as the session tells it, so every tab shows the same. */
function lastStatus(meta: SessionMeta | null | undefined): MessageStatus {
  if (meta?.status === 'working') return RUNNING
  if (meta?.status === 'error') return { type: 'incomplete', reason: 'error', error: meta.status_reason ?? 'error' }
  if (meta?.status === 'done' && meta.status_reason === STOPPED_REASON) return CANCELLED
  return COMPLETE
}

const EMPTY_TREE: ChatTree = { nodes: [], byId: new Map(), headId: null, path: [], appendParent: null }

/** The session's tree, folded into framework messages; unchanged nodes keep their identity. */
function useChatTree(store: Store | null, session_id: string | null): ChatTree {
  const tree$ = useMemo(() => (store && session_id ? store.tree$(session_id) : null), [store, session_id])
  const tree = useObservable<SessionTree | null, null>(tree$, null)
  const cache = useRef<{ session_id: string | null; nodes: Map<string, ChatNode> }>({ session_id, nodes: new Map() })
  if (cache.current.session_id !== session_id) cache.current = { session_id, nodes: new Map() }
  return useMemo(() => (tree ? foldTree(tree, cache.current.nodes) : EMPTY_TREE), [tree])
}

/**
 * An assistant-ui runtime whose thread is a Colloquy session: the whole tree as the runtime's
 * message repository (head = the active leaf), branch switches move the active leaf, edits and
 * regenerations append siblings, replies stream into the store, and `isRunning` follows the
 * session's status, so every tab shows the same. Needs a `<ColloquyProvider store>` above it.
 */
export function useColloquyRuntime(options: ColloquyRuntimeOptions): AssistantRuntime {
  const store = useStore()
  const { session_id } = options
  const chat = useChatTree(store, session_id)
  const meta = useSession(session_id ?? '').data ?? null
  const isRunning = meta?.status === 'working'
  const latest = useRef({ options, chat, store })
  latest.current = { options, chat, store }

  // A reply cut off by a closed tab is marked interrupted as soon as that tab's lock goes.
  useEffect(() => (store ? watchReplies(store) : undefined), [store])

  // One ThreadMessage per node and status: the runtime re-renders only messages whose object changed.
  const converted = useRef(new WeakMap<ChatNode, { status: MessageStatus; message: ThreadMessage }>())
  const status = lastStatus(meta)
  const messageRepository = useMemo<ExportedMessageRepository>(() => {
    const last = chat.path.at(-1)
    const messages = chat.nodes.map((node) => {
      const s = node === last && node.role === 'assistant' ? status : COMPLETE
      let c = converted.current.get(node)
      if (!c || c.status !== s) converted.current.set(node, (c = { status: s, message: toThreadMessage(node, s) }))
      return { message: c.message, parentId: node.parentId }
    })
    return { headId: chat.headId, messages }
    // `status` is compared by its fields: a new object with the same meaning must not rebuild.
  }, [chat, status.type, (status as { reason?: string }).reason])

  const threadList = useThreadListAdapter(options)

  return useExternalStoreRuntime<ThreadMessage>({
    messageRepository,
    isRunning,
    setMessages: (messages) => {
      const { store: s, chat: c, options: o } = latest.current
      const last = messages.at(-1)
      const node = last ? c.byId.get(last.id) : undefined
      if (s && o.session_id && node) void s.setActiveLeaf({ session_id: o.session_id, entry_id: node.tail })
    },
    onNew: async (message) => {
      const parent = message.parentId === null ? null : latest.current.chat.byId.get(message.parentId)?.tail
      await ask(message, parent ?? latest.current.chat.appendParent)
    },
    onEdit: async (message) => {
      const { chat: c } = latest.current
      const source = message.sourceId ? c.byId.get(message.sourceId) : undefined
      // The edited message's own parent entry: the new message is its sibling.
      const parent = source ? source.entries[0].parent_id : message.parentId === null ? null : (c.byId.get(message.parentId)?.tail ?? null)
      await ask(message, parent)
    },
    onReload: async (parentId) => {
      const { chat: c, options: o } = latest.current
      const parent = parentId === null ? undefined : c.byId.get(parentId)
      if (!o.session_id || !parent) return
      await reply(o.session_id, parent.tail)
    },
    onCancel: async () => {
      const { store: s, options: o } = latest.current
      if (s && o.session_id) stopReply(s, o.session_id)
    },
    adapters: { threadList, ...(options.attachments && { attachments: options.attachments }) },
  })

  /** Appends the user message under `parent` (a new session when none is open), then replies. */
  async function ask(message: AppendMessage, parent: string | null): Promise<void> {
    const { store: s, options: o } = latest.current
    if (!s) throw new Error('the Colloquy store is not open yet')
    let sid = o.session_id
    if (!sid) {
      sid = await createThread(s)
      o.onSessionChange?.(sid)
    }
    const { content } = splitParts(partsFromThreadMessage(message))
    const at = parent ?? (await firstValueFrom(s.tree$(sid)))?.active_leaf ?? null
    const { entry_id } = await s.append({ session_id: sid, ...(at !== null && { parent_id: at }), message: { role: 'user', content, timestamp: Date.now() } })
    const meta = (await s.get({ session_id: sid }))?.meta
    if (meta && !meta.title.trim()) await s.setMeta({ session_id: sid, title: titleFrom(textOf(content)) })
    await reply(sid, entry_id)
  }

  /** Streams the model's reply under `parent_id` into `session_id` (and only there). */
  async function reply(session_id: string, parent_id: string): Promise<void> {
    const { store: s, options: o } = latest.current
    if (!s) return
    const tree = await firstValueFrom(s.tree$(session_id))
    if (!tree) return
    // The conversation the model sees: the path ending at the parent, as assistant-ui messages.
    const folded = foldTree({ ...tree, active_leaf: parent_id })
    const history = folded.path.map((n) => toThreadMessage(n))
    const writer = await startReply(s, { session_id, parent_id, ...(o.modelName ?? { model: 'app', provider: 'app' }) })
    let parts: NeutralPart[] = []
    let error: unknown = null
    const take = (r: ChatModelRunResult): void => {
      if (!r.content) return
      parts = r.content.flatMap((p) => fromPart(p) ?? [])
      writer.update(splitParts(parts).content)
    }
    try {
      const run = o.model.run({
        messages: history,
        runConfig: {},
        abortSignal: writer.signal,
        context: {},
        unstable_assistantMessageId: writer.entry_id,
        unstable_threadId: session_id,
        unstable_parentId: folded.headId,
        unstable_getMessage: () => toThreadMessage({ id: writer.entry_id, role: 'assistant', parts, entries: [] }, RUNNING),
      })
      if (Symbol.asyncIterator in run) {
        for await (const r of run) {
          if (writer.signal.aborted) break
          take(r)
        }
      } else take(await run)
    } catch (e) {
      if (!writer.signal.aborted) error = e
    }
    const { content, sidecar } = splitParts(parts)
    await writer.finish({ content, sidecar, stopped: writer.signal.aborted, error })
  }
}
