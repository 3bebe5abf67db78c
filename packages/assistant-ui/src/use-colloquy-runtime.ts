import { useEffect, useMemo, useReducer, useRef } from 'react'
import { firstValueFrom } from 'rxjs'
import type { SessionMeta, SessionTree, Store } from '@colloquy/core'
import { useStore } from '@colloquy/react'
import {
  createThread,
  foldTree,
  titleFrom,
  textOf,
  splitParts,
  startReply,
  stopReply,
  watchReplies,
  STOPPED_REASON,
  type ChatNode,
  type ChatTree,
  type NeutralPart,
} from '@colloquy/parts'
import {
  useExternalStoreRuntime,
  type AppendMessage,
  type AttachmentAdapter,
  type AssistantRuntime,
  type ChatModelAdapter,
  type ChatModelRunResult,
  type ExportedMessageRepository,
  type ExternalStoreAdapter,
  type MessageStatus,
  type ThreadMessage,
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
  if (meta?.status === 'error')
    return { type: 'incomplete', reason: 'error', error: meta.status_reason ?? 'error' }
  if (meta?.status === 'done' && meta.status_reason === STOPPED_REASON) return CANCELLED
  return COMPLETE
}

const EMPTY_TREE: ChatTree = { nodes: [], byId: new Map(), headId: null, path: [], appendParent: null }

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i])

/** What the runtime is handed: its repository and `isRunning`. */
interface Snapshot {
  repository: ExportedMessageRepository
  isRunning: boolean
}

/** The part of assistant-ui's runtime core that takes a new adapter (what `useExternalStoreRuntime`'s effect calls). */
interface AdapterSink {
  setAdapter(adapter: ExternalStoreAdapter<ThreadMessage>): void
}

/**
 * The session's tree and status as the runtime's repository, kept outside React state: a streamed
 * chunk goes straight to the runtime, and the component calling the hook does not re-render for
 * it (which would re-render everything under its `AssistantRuntimeProvider`). Unchanged nodes keep
 * their `ThreadMessage` and their repository item, so the runtime re-renders only what changed.
 */
class RepositoryFeed {
  chat: ChatTree = EMPTY_TREE
  snapshot: Snapshot = { repository: { headId: null, messages: [] }, isRunning: false }
  private nodes = new Map<string, ChatNode>()
  /**
   * The reply this tab is streaming, as the model gave it: shown from memory at once, not after
   * its write commits (the store's copy lags behind it by a commit and catches up with it).
   */
  private streaming: { id: string; parts: readonly NeutralPart[]; node?: ChatNode } | null = null
  private items = new WeakMap<
    ChatNode,
    { status: MessageStatus; item: ExportedMessageRepository['messages'][number] }
  >()
  private status: MessageStatus = COMPLETE
  private meta: SessionMeta | null = null

  constructor(
    private readonly store: Store | null,
    readonly session_id: string | null,
    private readonly onChange: () => void,
  ) {}

  /** Follows the session's tree and status in the store it was made for; returns the unsubscribe. */
  watch(): () => void {
    const { store, session_id } = this
    if (!store || !session_id) return () => {}
    const tree = store.tree$(session_id).subscribe((t) => this.setTree(t))
    const meta = store.session$(session_id).subscribe((m) => this.setMeta(m))
    return () => {
      tree.unsubscribe()
      meta.unsubscribe()
    }
  }

  /** The streaming reply's content so far. */
  stream(entry_id: string, parts: readonly NeutralPart[]): void {
    this.streaming = { id: entry_id, parts }
    this.publish()
  }

  /** The reply ended: the store's copy (written in full by now) is shown from here on. */
  endStream(entry_id: string): void {
    if (this.streaming?.id !== entry_id) return
    this.streaming = null
    this.publish()
  }

  /** Hands the current snapshot to the runtime again. */
  push(): void {
    this.onChange()
  }

  setTree(tree: SessionTree | null): void {
    this.chat = tree ? foldTree(tree, this.nodes) : EMPTY_TREE
    this.publish()
  }

  setMeta(meta: SessionMeta | null): void {
    const status = lastStatus(meta)
    const running = meta?.status === 'working'
    this.meta = meta
    // Every chunk touches the session's `updated_at`: only a change of how its reply stands matters.
    if (
      status.type === this.status.type &&
      (status as { reason?: string }).reason === (this.status as { reason?: string }).reason &&
      running === this.snapshot.isRunning
    )
      return
    this.status = status
    this.publish()
  }

  /**
   * The node as shown: the streaming reply's own content over the store's. The store catching up
   * with what is shown (its copy lags by a write) keeps the node, so the runtime is handed nothing
   * new for it: each chunk renders once, however its write and its render interleave.
   */
  private shown(node: ChatNode): ChatNode {
    const st = this.streaming
    if (st?.id !== node.id) return node
    if (!st.node || st.node.parentId !== node.parentId) st.node = { ...node, parts: st.parts }
    return st.node
  }

  private publish(): void {
    const last = this.chat.path.at(-1)
    const messages = this.chat.nodes.map((stored) => {
      const node = this.shown(stored)
      const s = stored === last && node.role === 'assistant' ? this.status : COMPLETE
      let c = this.items.get(node)
      if (!c || c.status !== s) {
        this.items.set(
          node,
          (c = { status: s, item: { message: toThreadMessage(node, s), parentId: node.parentId } }),
        )
      }
      return c.item
    })
    const isRunning = this.meta?.status === 'working'
    const before = this.snapshot
    // Nothing the runtime holds changed (the store caught up with what was shown): nothing to hand it.
    if (
      before.isRunning === isRunning &&
      before.repository.headId === this.chat.headId &&
      sameItems(before.repository.messages, messages)
    )
      return
    this.snapshot = { repository: { headId: this.chat.headId, messages }, isRunning }
    this.onChange()
  }
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

  // A reply cut off by a closed tab is marked interrupted as soon as that tab's lock goes.
  useEffect(() => (store ? watchReplies(store) : undefined), [store])

  // The adapter of the last render, and the runtime to hand each new snapshot to between renders.
  const adapterRef = useRef<ExternalStoreAdapter<ThreadMessage> | null>(null)
  const sinkRef = useRef<AdapterSink | null>(null)
  // Without a reachable core (another assistant-ui release), a snapshot re-renders this component instead.
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  const feed = useMemo(() => {
    // What arrives in one task (the tree and the status of one commit) reaches the runtime once.
    let queued = false
    const hand = (): void => {
      queued = false
      const adapter = adapterRef.current
      const s = feed.snapshot
      if (adapter && sinkRef.current)
        sinkRef.current.setAdapter({ ...adapter, messageRepository: s.repository, isRunning: s.isRunning })
      else rerender()
    }
    // One feed per store and session: what it shows and follows is theirs, never another's.
    const feed = new RepositoryFeed(store, session_id, () => {
      if (!queued) queueMicrotask(hand)
      queued = true
    })
    return feed
  }, [store, session_id])
  const latest = useRef({ options, feed, store })
  latest.current = { options, feed, store }

  const threadList = useThreadListAdapter(options)

  const rendered = feed.snapshot
  const adapter: ExternalStoreAdapter<ThreadMessage> = {
    messageRepository: rendered.repository,
    isRunning: rendered.isRunning,
    setMessages: (messages) => {
      const {
        store: s,
        feed: { chat: c },
        options: o,
      } = latest.current
      const last = messages.at(-1)
      const node = last ? c.byId.get(last.id) : undefined
      if (s && o.session_id && node) void s.setActiveLeaf({ session_id: o.session_id, entry_id: node.tail })
    },
    onNew: async (message) => {
      const parent =
        message.parentId === null ? null : latest.current.feed.chat.byId.get(message.parentId)?.tail
      await ask(message, parent ?? latest.current.feed.chat.appendParent)
    },
    onEdit: async (message) => {
      const {
        feed: { chat: c },
      } = latest.current
      const source = message.sourceId ? c.byId.get(message.sourceId) : undefined
      // The edited message's own parent entry: the new message is its sibling.
      const parent = source
        ? source.entries[0].parent_id
        : message.parentId === null
          ? null
          : (c.byId.get(message.parentId)?.tail ?? null)
      await ask(message, parent)
    },
    onReload: async (parentId) => {
      const {
        feed: { chat: c },
        options: o,
      } = latest.current
      const parent = parentId === null ? undefined : c.byId.get(parentId)
      if (!o.session_id || !parent) return
      await reply(o.session_id, parent.tail)
    },
    onCancel: async () => {
      const { store: s, options: o } = latest.current
      if (s && o.session_id) stopReply(s, o.session_id)
    },
    adapters: { threadList, ...(options.attachments && { attachments: options.attachments }) },
  }
  adapterRef.current = adapter
  const runtime = useExternalStoreRuntime<ThreadMessage>(adapter)
  // The runtime's core, which `useExternalStoreRuntime` hands each render's adapter to: snapshots
  // that arrive between renders go the same way (assistant-ui keeps it on a private field).
  const core = (runtime as unknown as { _core?: Partial<AdapterSink> })._core
  sinkRef.current = typeof core?.setAdapter === 'function' ? (core as AdapterSink) : null

  // After the runtime's own effect, which hands it this render's snapshot: a newer one that came
  // between the render and now goes after it.
  useEffect(() => {
    if (feed.snapshot !== rendered) feed.push()
  })
  // Also after it: the first snapshot is pushed once the runtime holds this render's adapter.
  useEffect(() => feed.watch(), [feed])
  return runtime

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
    const { entry_id } = await s.append({
      session_id: sid,
      ...(at !== null && { parent_id: at }),
      message: { role: 'user', content, timestamp: Date.now() },
    })
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
    const writer = await startReply(s, {
      session_id,
      parent_id,
      ...(o.modelName ?? { model: 'app', provider: 'app' }),
    })
    let parts: NeutralPart[] = []
    // The feed showing this session, if it is still the one shown (a thread switch mid-reply leaves it be).
    const shownFeed = (): RepositoryFeed | null =>
      latest.current.feed.session_id === session_id ? latest.current.feed : null
    let error: unknown = null
    const take = (r: ChatModelRunResult): void => {
      if (!r.content) return
      parts = r.content.flatMap((p) => fromPart(p) ?? [])
      writer.update(splitParts(parts).content)
      shownFeed()?.stream(writer.entry_id, parts)
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
        unstable_getMessage: () =>
          toThreadMessage({ id: writer.entry_id, role: 'assistant', parts, entries: [] }, RUNNING),
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
    try {
      await writer.finish({ content, sidecar, stopped: writer.signal.aborted, error })
    } finally {
      shownFeed()?.endStream(writer.entry_id)
    }
  }
}
