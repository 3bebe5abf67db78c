import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from 'ai'
import type { SessionMeta, SessionTree, Store } from '@colloquy/core'
import {
  foldTree,
  isInterrupted,
  splitParts,
  startReply,
  stopReply,
  titleFrom,
  textOf,
  watchReplies,
  type ChatNode,
  type ChatTree,
  type ReplyWriter,
} from '@colloquy/parts'
import { partsFromUIMessage, toUIMessage } from './mapping.js'

export interface ColloquyChatInit<M extends UIMessage> extends Omit<ChatInit<M>, 'messages' | 'id'> {
  store: Store
  /** The session the chat lives in (create one with `createThread` from `@colloquy/parts`). */
  session_id: string
  /** Stored on each reply's entry. */
  modelName?: { model: string; provider: string }
}

type Listener = () => void

/** Calls `fn` at most once per `ms` (leading and trailing), as the SDK's own throttle does. */
function throttled(fn: Listener, ms: number | undefined): Listener {
  if (!ms) return fn
  let timer: ReturnType<typeof setTimeout> | null = null
  let last = 0
  return () => {
    const wait = last + ms - Date.now()
    if (wait <= 0) {
      last = Date.now()
      fn()
    } else
      timer ??= setTimeout(() => {
        timer = null
        last = Date.now()
        fn()
      }, wait)
  }
}

const sameIds = (a: readonly UIMessage[], b: readonly UIMessage[], n: number): boolean => {
  for (let i = 0; i < n; i++) if (a[i]?.id !== b[i]?.id) return false
  return true
}

/**
 * The SDK's `ChatState` kept in a Colloquy session. Reads answer at once from memory (the SDK
 * reads right after it writes); every write is also applied to the store, in order, in the
 * background. The SDK's truncations move the active leaf instead of deleting, and the edited
 * user message it re-sends under the same id becomes a new sibling entry with an id of its own.
 */
class ColloquyChatState<M extends UIMessage> implements ChatState<M> {
  #messages: M[] = []
  #status: ChatStatus = 'ready'
  #error: Error | undefined = undefined
  #remoteRunning = false
  readonly #listeners = {
    messages: new Set<Listener>(),
    status: new Set<Listener>(),
    error: new Set<Listener>(),
  }
  /** The store's tree as last emitted, folded into nodes only when read (see `#tree`). */
  #raw: SessionTree | null = null
  #folded: ChatTree | null = null
  readonly #cache = new Map<string, ChatNode>()
  readonly #converted = new WeakMap<ChatNode, M>()
  /** Store writes, in the order the SDK made them, and how many are still on their way. */
  #queue: Promise<unknown> = Promise.resolve()
  #pending = 0
  /** The reply this chat is streaming: its message id and writer. */
  #reply: { id: string; writer: Promise<ReplyWriter | null>; last: M } | null = null
  #stopping = false
  #stops: (() => void)[] = []
  readonly ready: Promise<void>
  onRemoteStop: () => void = () => {}

  constructor(
    readonly store: Store,
    readonly session_id: string,
    private readonly modelName: { model: string; provider: string },
  ) {
    let loaded!: () => void
    this.ready = new Promise((r) => (loaded = r))
    const treeSub = store.tree$(session_id).subscribe((tree) => {
      this.#onTree(tree)
      loaded()
    })
    const metaSub = store.session$(session_id).subscribe((meta) => this.#onMeta(meta))
    // A reply cut off by a closed tab is marked interrupted as soon as that tab's lock goes.
    this.#stops.push(
      () => treeSub.unsubscribe(),
      () => metaSub.unsubscribe(),
      watchReplies(store),
    )
  }

  close(): void {
    for (const stop of this.#stops) stop()
  }

  /** While this tab streams or writes, its own messages are the truth; the store catches up behind them. */
  get #busy(): boolean {
    return (
      this.#status === 'submitted' ||
      this.#status === 'streaming' ||
      this.#reply !== null ||
      this.#pending > 0
    )
  }

  #onTree(tree: SessionTree | null): void {
    this.#raw = tree
    this.#folded = null
    this.#publish()
  }

  /**
   * The session's nodes, folded when first read after a change. While this tab streams a reply
   * every chunk's commit brings a new tree that nothing reads (its own messages are shown):
   * folding each would walk the whole session per chunk, which the SDK's in-memory chat never does.
   */
  get #tree(): ChatTree | null {
    if (this.#raw && !this.#folded) this.#folded = foldTree(this.#raw, this.#cache)
    return this.#folded
  }

  /** Shows the store's active path (as it is now) when nothing of this tab's is in flight. */
  #publish(): void {
    if (this.#busy || !this.#tree) return
    const next = this.#tree.path.map((node) => {
      let m = this.#converted.get(node)
      if (!m) this.#converted.set(node, (m = toUIMessage<M>(node)))
      return m
    })
    if (next.length === this.#messages.length && next.every((m, i) => m === this.#messages[i])) return
    this.#messages = next
    this.#emit('messages')
  }

  #onMeta(meta: SessionMeta | null): void {
    // Another tab streaming into this session shows here as `streaming`, ending as `ready`.
    const remote = meta?.status === 'working' && this.#reply === null
    if (remote !== this.#remoteRunning) {
      this.#remoteRunning = remote
      this.#emit('status')
    }
    if (isInterrupted(meta) && !this.#busy && !this.#error) {
      this.#error = new Error(meta?.status_reason ?? 'the reply did not finish')
      this.#status = 'error'
      this.#emit('error')
      this.#emit('status')
    }
  }

  #emit(kind: 'messages' | 'status' | 'error'): void {
    for (const l of this.#listeners[kind]) l()
  }

  #write(op: () => Promise<unknown>): void {
    this.#pending++
    this.#queue = this.#queue
      .then(op)
      .catch((e: unknown) => {
        this.#error = e instanceof Error ? e : new Error(String(e))
        this.#emit('error')
      })
      .finally(() => {
        if (--this.#pending === 0) this.#publish()
      })
  }

  /**
   * Where a message after the one with id `after` attaches: that message's last folded entry, or
   * (with no message before it) the first message's parent, the hidden root. Read when the write
   * runs, after the writes before it, so the tree has caught up.
   */
  #parentAfter(after: string | undefined): string | null {
    const tree = this.#tree
    if (after === undefined) {
      const first = tree?.nodes.find((n) => n.parentId === null)?.entries[0]
      return first ? first.parent_id : (tree?.appendParent ?? null)
    }
    return tree?.byId.get(after)?.tail ?? after
  }

  // ---- ChatState -------------------------------------------------------------------------

  get status(): ChatStatus {
    return this.#remoteRunning && !this.#busy && this.#status !== 'error' ? 'streaming' : this.#status
  }

  set status(status: ChatStatus) {
    this.#status = status
    // A new request: a Stop pressed before, in a tab that was not writing, is not about it.
    if (status === 'submitted') this.#stopping = false
    if ((status === 'ready' || status === 'error') && this.#reply)
      this.#finishReply(status === 'error' ? (this.#error ?? new Error('error')) : null)
    if (status === 'ready' || status === 'error') this.#stopping = false
    this.#emit('status')
  }

  get error(): Error | undefined {
    return this.#error
  }

  set error(error: Error | undefined) {
    this.#error = error
    this.#emit('error')
  }

  get messages(): M[] {
    return this.#messages
  }

  /** The SDK truncates (edit, regenerate) by assignment: the active leaf moves back, nothing is deleted. */
  set messages(messages: M[]) {
    const prev = this.#messages
    this.#messages = [...messages]
    this.#emit('messages')
    const kept = Math.min(prev.length, messages.length)
    const prefix = sameIds(prev, messages, kept)
    if (prefix && messages.length <= prev.length) {
      const after = messages.at(-1)?.id
      this.#write(async () => {
        const leaf = this.#parentAfter(after)
        if (leaf !== null) await this.store.setActiveLeaf({ session_id: this.session_id, entry_id: leaf })
      })
      return
    }
    // An app replacing the list (useChat's setMessages): keep the common prefix, append the rest.
    const from = prefix ? kept : messages.findIndex((m, i) => m.id !== prev[i]?.id)
    for (let i = from; i < messages.length; i++) this.#append(i, messages[i])
  }

  pushMessage = (message: M): void => {
    // A user message under an id the session already holds (a replay, an app reusing ids) gets
    // an id of its own: appending it under the old one would be a silent no-op, and the chat
    // would list one id twice.
    if (
      message.role === 'user' &&
      (this.#tree?.byId.has(message.id) || this.#messages.some((m) => m.id === message.id))
    ) {
      message = { ...message, id: `e_${crypto.randomUUID()}` }
    }
    this.#messages = [...this.#messages, message]
    this.#emit('messages')
    this.#append(this.#messages.length - 1, message)
  }

  popMessage = (): void => {
    this.messages = this.#messages.slice(0, -1)
  }

  replaceMessage = (index: number, message: M): void => {
    const old = this.#messages[index]
    const snap = this.snapshot(message)
    if (this.#reply && message.id === this.#reply.id) {
      this.#messages = this.#messages.map((m, i) => (i === index ? snap : m))
      this.#emit('messages')
      this.#reply.last = snap
      const { content } = splitParts(partsFromUIMessage(snap))
      void this.#reply.writer.then((w) => w?.update(content))
      return
    }
    if (old && message.role === 'user' && old.role === 'user' && index === this.#messages.length - 1) {
      // An edit: the SDK keeps the message's id, Colloquy appends a sibling with an id of its own.
      // The original's parent is read when the write runs: the original may still be on its way.
      const entry_id = `e_${crypto.randomUUID()}`
      const edited = { ...snap, id: entry_id }
      this.#messages = this.#messages.map((m, i) => (i === index ? edited : m))
      this.#emit('messages')
      const { content } = splitParts(partsFromUIMessage(edited))
      const session_id = this.session_id
      this.#write(async () => {
        const parent =
          (await this.store.getMessage({ session_id, entry_id: old.id }))?.entry.parent_id ?? null
        await this.store.append({
          session_id,
          entry_id,
          ...(parent !== null && { parent_id: parent }),
          message: { role: 'user', content, timestamp: Date.now() },
        })
      })
      return
    }
    this.#messages = this.#messages.map((m, i) => (i === index ? snap : m))
    this.#emit('messages')
    // A message changed in place (a tool output added by the app): its content follows.
    if (old) {
      const { content } = splitParts(partsFromUIMessage(snap))
      const session_id = this.session_id
      this.#write(async () => {
        const found = (await this.store.getMessage({ session_id, entry_id: old.id }))?.entry
        if (found?.kind === 'message' && found.message.role !== 'function_result')
          await this.store.updateMessage({ session_id, entry_id: old.id, content })
      })
    }
  }

  /**
   * What the SDK's own chat state keeps of a message it is handed: a copy of the message and of
   * each part (the SDK goes on mutating the parts of the message it streams), not a deep clone:
   * one runs per streamed chunk.
   */
  snapshot = <T>(value: T): T => {
    if (value === null || typeof value !== 'object' || !Array.isArray((value as { parts?: unknown }).parts))
      return value
    const message = value as unknown as UIMessage
    const copy: UIMessage = { ...message, parts: message.parts.map((part) => ({ ...part })) }
    if (message.metadata !== null && typeof message.metadata === 'object')
      copy.metadata = Array.isArray(message.metadata) ? [...message.metadata] : { ...message.metadata }
    return copy as unknown as T
  }

  // ---- store writes ------------------------------------------------------------------------

  /** Appends `messages[index]`: a user message at once, an assistant message as a streamed reply. */
  #append(index: number, message: M): void {
    const after = this.#messages[index - 1]?.id
    const parent = (): string | null => this.#parentAfter(after)
    if (message.role === 'assistant' && this.#status !== 'ready' && this.#status !== 'error') {
      const session_id = this.session_id
      const started = (async () => {
        await this.#queue
        const p = parent()
        if (p === null) return null
        const writer = await startReply(this.store, {
          session_id,
          parent_id: p,
          entry_id: message.id,
          ...this.modelName,
        })
        // Stop pressed in another tab aborts this writer: the SDK's own stop follows.
        writer.signal.addEventListener('abort', () => {
          if (!this.#stopping) this.onRemoteStop()
        })
        return writer
      })().catch((e: unknown) => {
        // Not persisted (another tab is replying here, the session is gone): the request stops too.
        this.#error = e instanceof Error ? e : new Error(String(e))
        this.#emit('error')
        this.onRemoteStop()
        return null
      })
      this.#reply = { id: message.id, writer: started, last: message }
      this.#write(() => started)
      const { content } = splitParts(partsFromUIMessage(message))
      void started.then((w) => w?.update(content))
      return
    }
    const { content } = splitParts(partsFromUIMessage(message))
    const session_id = this.session_id
    this.#write(async () => {
      const p = parent()
      const role = message.role === 'assistant' ? 'assistant' : 'user'
      const msg =
        role === 'user'
          ? ({ role, content, timestamp: Date.now() } as const)
          : ({ role, content, stop_reason: 'end', timestamp: Date.now(), ...this.modelName } as const)
      await this.store.append({
        session_id,
        entry_id: message.id,
        ...(p !== null && { parent_id: p }),
        message: msg,
      })
      if (role === 'user') {
        const meta = (await this.store.get({ session_id }))?.meta
        if (meta && !meta.title.trim())
          await this.store.setMeta({ session_id, title: titleFrom(textOf(content)) })
      }
    })
  }

  #finishReply(error: Error | null): void {
    const reply = this.#reply
    if (!reply) return
    this.#reply = null
    const { content, sidecar } = splitParts(partsFromUIMessage(reply.last), reply.last.metadata as never)
    const stopped = this.#stopping
    // Once written, the store's view takes over again (#write publishes when the queue drains).
    this.#write(async () => {
      const w = await reply.writer
      await w?.finish({ content, sidecar, stopped, error })
    })
  }

  /** Resolves when every write issued so far is in the store. */
  async flush(): Promise<void> {
    while (this.#pending > 0) await this.#queue
  }

  markStopping(): void {
    this.#stopping = true
  }

  // ---- what useChat subscribes to ----------------------------------------------------------

  '~registerMessagesCallback' = (onChange: Listener, throttleWaitMs?: number): (() => void) => {
    const l = throttled(onChange, throttleWaitMs)
    this.#listeners.messages.add(l)
    return () => this.#listeners.messages.delete(l)
  }

  '~registerStatusCallback' = (onChange: Listener): (() => void) => {
    this.#listeners.status.add(onChange)
    return () => this.#listeners.status.delete(onChange)
  }

  '~registerErrorCallback' = (onChange: Listener): (() => void) => {
    this.#listeners.error.add(onChange)
    return () => this.#listeners.error.delete(onChange)
  }
}

/**
 * An AI SDK chat whose state lives in a Colloquy session. Use it as `useChat({ chat })` in React
 * and with `useColloquyChat` in Vue. `sendMessage`, `regenerate`, `stop`, `status` and `error`
 * behave as the SDK documents, except that an edit (`sendMessage({ messageId })`) or a
 * regeneration adds a sibling branch instead of deleting the tail. Replies are persisted as they
 * stream (at most once a frame); other tabs on the session see them stream and report `streaming`.
 */
export class ColloquyChat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  readonly session_id: string
  readonly store: Store
  /** Resolves once the session's messages are loaded. */
  readonly ready: Promise<void>
  readonly #state: ColloquyChatState<M>

  constructor({ store, session_id, modelName, ...init }: ColloquyChatInit<M>) {
    const state = new ColloquyChatState<M>(store, session_id, modelName ?? { model: 'app', provider: 'app' })
    super({ ...init, id: session_id, state })
    this.#state = state
    this.store = store
    this.session_id = session_id
    this.ready = state.ready
    state.onRemoteStop = () => void this.#stopHere()
    const stop = this.stop
    this.stop = async () => {
      state.markStopping()
      stopReply(store, session_id)
      await stop()
    }
    this.#stopHere = async () => {
      state.markStopping()
      await stop()
    }
  }

  #stopHere: () => Promise<void>

  '~registerMessagesCallback' = (onChange: () => void, throttleWaitMs?: number): (() => void) =>
    this.#state['~registerMessagesCallback'](onChange, throttleWaitMs)
  '~registerStatusCallback' = (onChange: () => void): (() => void) =>
    this.#state['~registerStatusCallback'](onChange)
  '~registerErrorCallback' = (onChange: () => void): (() => void) =>
    this.#state['~registerErrorCallback'](onChange)

  /** Resolves when everything the chat has done so far is in the store (writes run in the background). */
  flush(): Promise<void> {
    return this.#state.flush()
  }

  /** Stops listening to the store (the chat keeps its last state). */
  close(): void {
    this.#state.close()
  }
}
