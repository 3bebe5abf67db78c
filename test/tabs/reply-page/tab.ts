import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import {
  awaitReplyEnd,
  createThread,
  recoverInterrupted,
  startReply,
  stopReply,
  watchReplies,
  type ReplyWriter,
} from '@colloquy/parts'

// One tab of the reply tests: a store on the origin's shared database, driven by the test
// through `window.tab`. Each tab counts the status changes it sees, whoever made them.

const DB = 'replies'
let store: Store
let writer: ReplyWriter | undefined
let unwatch: (() => void) | undefined
const seen: { status: string; reason?: string }[] = []

const tab = {
  async open(watch: boolean) {
    store = await createStore({ storage: indexedDbStorage({ name: DB }) })
    store
      .on('session::status-changed')
      .subscribe((e) =>
        seen.push({ status: e.status, ...(e.status_reason !== undefined && { reason: e.status_reason }) }),
      )
    if (watch) unwatch = watchReplies(store)
  },
  watch() {
    unwatch = watchReplies(store)
  },
  unwatch() {
    unwatch?.()
  },
  create: (): Promise<string> => createThread(store),
  /** Starts a reply in this tab and writes `text` into it; it stays open until `finish`. */
  async reply(session_id: string, text: string): Promise<string> {
    const tree = await store.get({ session_id })
    if (!tree) throw new Error('no such session')
    const { entry_id } = await store.append({
      session_id,
      message: { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: Date.now() },
    })
    writer = await startReply(store, { session_id, parent_id: entry_id, model: 'm', provider: 'p' })
    writer.update([{ type: 'text', text }])
    return writer.entry_id
  },
  /** True once this tab's writer was told to stop (here or from another tab). */
  stopped: (): boolean => writer?.signal.aborted ?? false,
  async finish(stopped = false) {
    await writer!.finish({ content: [{ type: 'text', text: 'the end' }], stopped })
  },
  stop: (session_id: string): void => stopReply(store, session_id),
  recover: (session_id: string): Promise<void> => recoverInterrupted(store, [session_id]),
  /** Waits, as the watch does (joining its wait when there is one), until nobody writes the reply; true when this tab marked it. */
  settle: (session_id: string): Promise<boolean> => awaitReplyEnd(store, session_id),
  /** Sets `working` without any reply lock: a reply whose tab is gone and whose lock went with it. */
  async orphan(session_id: string) {
    await store.setStatus({ session_id, status: 'working', reason: 'replying' })
  },
  /** Another device's reply arriving over sync: `working` applied as a pull applies it, with no lock or writer of this browser. */
  async pulled(session_id: string) {
    const meta = (await store.get({ session_id }))!.meta
    await store.applyReplica(
      [
        {
          type: 'meta',
          meta: { ...meta, status: 'working', status_reason: 'replying', updated_at: meta.updated_at + 1 },
        },
      ],
      { policy: 'pull' },
    )
  },
  async status(session_id: string): Promise<{ status?: string; reason?: string }> {
    const meta = (await store.get({ session_id }))?.meta
    return { status: meta?.status, ...(meta?.status_reason !== undefined && { reason: meta.status_reason }) }
  },
  /** The status changes this tab saw, in order. */
  seen: () => seen,
  /** Whether a tab of this origin holds (or waits for) the session's reply lock. */
  async lock(session_id: string): Promise<{ held: number; pending: number }> {
    const q = await navigator.locks.query()
    const name = `colloquy-reply:${session_id}`
    return {
      held: (q.held ?? []).filter((l) => l.name === name).length,
      pending: (q.pending ?? []).filter((l) => l.name === name).length,
    }
  },
}

;(window as unknown as { tab: typeof tab }).tab = tab
