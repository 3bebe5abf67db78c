import { describe, expect, it, vi } from 'vitest'
import { createStore, indexedDbStorage, type AssistantMessage, type Store } from '@colloquy/core'
import {
  createThread,
  INTERRUPTED_REASON,
  ownReply,
  recoverInterrupted,
  startReply,
  stopReply,
  STOPPED_REASON,
} from '../src/index.js'

// The reply writer records how a reply ended on the reply's own message (stopped, failed,
// interrupted), so an earlier reply keeps its mark once the session's status tells of a newer one.

let n = 0
const open = (): Promise<Store> =>
  createStore({ storage: indexedDbStorage({ name: `parts-reply-ending-${Date.now()}-${n++}` }) })
/** A second tab on the database of `name` that hears nothing from the others: its memory lags storage. */
const deaf = (name: string): Promise<Store> =>
  createStore({ storage: indexedDbStorage({ name }), multiTab: false })

async function ask(store: Store, session_id: string): Promise<string> {
  const { entry_id } = await store.append({
    session_id,
    message: { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: Date.now() },
  })
  return entry_id
}

/** Reads a reply of the session back from the store. */
const reply =
  (store: Store, session_id: string) =>
  async (id: string): Promise<AssistantMessage & { id: string }> => {
    const r = await store.getMessage({ session_id, entry_id: id })
    if (r?.entry.kind !== 'message' || r.entry.message.role !== 'assistant')
      throw new Error(`${id} is not a reply`)
    return { ...r.entry.message, id }
  }

const text = (t: string) => [{ type: 'text' as const, text: t }]

/** This tab's reply writer, replying to a new question. */
const replyTo = async (store: Store, session_id: string) =>
  startReply(store, { session_id, parent_id: await ask(store, session_id), model: 'm', provider: 'p' })

/** A reply entry as a writer appends it before its end is known (`end`): what a closed writer tab leaves. */
async function appendReply(
  store: Store,
  session_id: string,
  parent_id: string,
  content: string,
): Promise<string> {
  const { entry_id } = await store.append({
    session_id,
    parent_id,
    message: {
      role: 'assistant',
      content: text(content),
      stop_reason: 'end',
      model: 'm',
      provider: 'p',
      timestamp: Date.now(),
    },
  })
  return entry_id
}

/** A reply's message once marked interrupted, keeping the `content` it had. */
const interrupted = (content: string) => ({
  stop_reason: 'error',
  error_message: INTERRUPTED_REASON,
  content: text(content),
})
/** The session's meta once its reply is marked interrupted. */
const interruptedMeta = { status: 'error', status_reason: INTERRUPTED_REASON }

describe('the reply writer records how a reply ended on its message', () => {
  it('a stopped reply is `aborted`, a failed one `error` with its reason, a finished one `end`; each keeps it after the next reply', async () => {
    const store = await open()
    const session_id = await createThread(store)
    const read = reply(store, session_id)

    const stopped = await replyTo(store, session_id)
    stopped.update(text('Once upon'))
    await stopped.finish({ content: text('Once upon a'), stopped: true })
    expect(await read(stopped.entry_id)).toMatchObject({
      stop_reason: 'aborted',
      content: text('Once upon a'),
    })
    expect((await store.get({ session_id }))?.meta).toMatchObject({
      status: 'done',
      status_reason: STOPPED_REASON,
    })

    const failed = await replyTo(store, session_id)
    await failed.finish({ content: text('Par'), error: new Error('HTTP 500 from the endpoint') })
    expect(await read(failed.entry_id)).toMatchObject({
      stop_reason: 'error',
      error_message: 'HTTP 500 from the endpoint',
      content: text('Par'),
    })

    const finished = await replyTo(store, session_id)
    await finished.finish({ content: text('All of it') })
    expect((await read(finished.entry_id)).stop_reason).toBe('end')
    expect((await read(finished.entry_id)).error_message).toBeUndefined()
    // The session tells only of the newest reply; the earlier ones keep theirs.
    expect((await store.get({ session_id }))?.meta.status).toBe('done')
    expect((await read(stopped.entry_id)).stop_reason).toBe('aborted')
    expect(await read(failed.entry_id)).toMatchObject({
      stop_reason: 'error',
      error_message: 'HTTP 500 from the endpoint',
    })
    await store.close()
  })

  it('recovering a reply whose tab closed marks its message interrupted, and only an unfinished reply', async () => {
    const store = await open()
    const session_id = await createThread(store)
    const read = reply(store, session_id)
    // What a closed writer tab leaves: its reply entry (content so far, `end` as appended) as the
    // leaf, the session `working`, and no reply lock held.
    ownReply(store, session_id)
    const entry_id = await appendReply(store, session_id, await ask(store, session_id), 'Half a')
    await store.setStatus({ session_id, status: 'working', reason: 'replying' })
    await recoverInterrupted(store, [session_id])
    expect(await read(entry_id)).toMatchObject(interrupted('Half a'))
    expect((await store.get({ session_id }))?.meta).toMatchObject(interruptedMeta)

    // The next reply finishes; the interrupted one keeps its mark.
    const next = await replyTo(store, session_id)
    await next.finish({ content: text('Whole') })
    expect((await read(next.entry_id)).stop_reason).toBe('end')
    expect((await read(entry_id)).error_message).toBe(INTERRUPTED_REASON)

    // A session left `working` whose leaf is not an unfinished reply (a user message): only the status is marked.
    const user = await ask(store, session_id)
    ownReply(store, session_id)
    await store.setStatus({ session_id, status: 'working', reason: 'replying' })
    await recoverInterrupted(store, [session_id])
    expect((await store.get({ session_id }))?.meta.status).toBe('error')
    expect((await store.getMessage({ session_id, entry_id: user }))?.entry.revision).toBe(0)
    expect((await read(next.entry_id)).stop_reason).toBe('end')
    await store.close()
  })

  it('a tab whose memory lags storage marks the reply as stored: its newest content, at its newest revision', async () => {
    const name = `parts-reply-ending-lag-${Date.now()}-${n++}`
    const writer = await deaf(name)
    const session_id = await createThread(writer)
    const question = await ask(writer, session_id)
    // The writer's reply, `working`, as the marking tab last saw it (read into its memory).
    ownReply(writer, session_id)
    const entry_id = await appendReply(writer, session_id, question, 'Half')
    await writer.setStatus({ session_id, status: 'working', reason: 'replying' })
    const marker = await deaf(name)
    expect((await reply(marker, session_id)(entry_id)).content).toEqual(text('Half'))
    // The writer's last commits, which never reached the marking tab (no relay here).
    await writer.updateMessage({ session_id, entry_id, content: text('Half a') })
    await writer.updateMessage({ session_id, entry_id, content: text('Half a sentence') })
    await writer.close()

    await recoverInterrupted(marker, [session_id])
    const check = await deaf(name)
    const stored = await reply(check, session_id)(entry_id)
    expect(stored).toMatchObject(interrupted('Half a sentence'))
    expect((await check.getMessage({ session_id, entry_id }))?.entry.revision).toBe(3)
    expect((await check.get({ session_id }))?.meta).toMatchObject(interruptedMeta)
    // And the marking tab itself shows the mark (its memory caught up in the commit).
    expect((await reply(marker, session_id)(entry_id)).error_message).toBe(INTERRUPTED_REASON)
    await Promise.all([marker.close(), check.close()])
  })

  it('a tab that never saw the reply appended (only `working`) still marks it', async () => {
    const name = `parts-reply-ending-unseen-${Date.now()}-${n++}`
    const writer = await deaf(name)
    const session_id = await createThread(writer)
    const question = await ask(writer, session_id)
    ownReply(writer, session_id)
    await writer.setStatus({ session_id, status: 'working', reason: 'replying' })
    const marker = await deaf(name)
    expect((await marker.get({ session_id }))?.meta.status).toBe('working')
    // Its memory holds the session's entries as they were then: the question is the leaf.
    expect((await marker.getMessage({ session_id, entry_id: question }))?.entry.kind).toBe('message')
    const entry_id = await appendReply(writer, session_id, question, 'Un')
    await writer.close()

    await recoverInterrupted(marker, [session_id])
    const check = await deaf(name)
    expect(await reply(check, session_id)(entry_id)).toMatchObject(interrupted('Un'))
    expect((await check.get({ session_id }))?.meta.status).toBe('error')
    await Promise.all([marker.close(), check.close()])
  })

  it("another device's reply (`working` with no lock and no writer of this browser) is left alone, until the reader presses Stop", async () => {
    const store = await open()
    const session_id = await createThread(store)
    const entry_id = await appendReply(store, session_id, await ask(store, session_id), 'From afar')
    // As a sync pull leaves it: the other device's status, and nothing of it in this browser.
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
    await recoverInterrupted(store, [session_id])
    expect((await store.get({ session_id }))?.meta).toMatchObject({
      status: 'working',
      status_reason: 'replying',
    })
    expect((await reply(store, session_id)(entry_id)).stop_reason).toBe('end')
    // Stop ends a reply nobody here writes, whoever wrote it.
    stopReply(store, session_id)
    await expect.poll(async () => (await store.get({ session_id }))?.meta.status).toBe('error')
    expect((await reply(store, session_id)(entry_id)).error_message).toBe(INTERRUPTED_REASON)
    await store.close()
  })

  it('a fast stream is written once a frame, not once a chunk: the newest content lands, and finish writes the last', async () => {
    const store = await open()
    const session_id = await createThread(store)
    const writer = await replyTo(store, session_id)
    const read = reply(store, session_id)
    let so_far = ''
    for (let i = 0; i < 200; i++) writer.update(text((so_far += `t${i} `)))
    // Without a finish, the newest content is written when its frame ends.
    await expect.poll(async () => (await read(writer.entry_id)).content).toEqual(text(so_far))
    const written = (await store.getMessage({ session_id, entry_id: writer.entry_id }))!.entry.revision
    // The first chunk at once, the 199 behind it as one write: not a transaction per chunk.
    expect(written).toBe(2)
    await writer.finish({ content: text(`${so_far}end`) })
    expect((await read(writer.entry_id)).content).toEqual(text(`${so_far}end`))
    await store.close()
  })

  it('a page being hidden writes the content waiting for its frame at once', async () => {
    const store = await open()
    const session_id = await createThread(store)
    const writer = await replyTo(store, session_id)
    const read = reply(store, session_id)
    const writes = vi.spyOn(store, 'updateMessage')
    writer.update(text('first '))
    writer.update(text('first second'))
    expect(writes).toHaveBeenCalledTimes(1)
    // Hidden inside the window: the waiting content is written now, not when a timer fires.
    dispatchEvent(new PageTransitionEvent('pagehide'))
    expect(writes).toHaveBeenCalledTimes(2)
    await store.flush()
    expect((await read(writer.entry_id)).content).toEqual(text('first second'))
    await writer.finish({ content: text('first second') })
    await store.close()
  })
})
