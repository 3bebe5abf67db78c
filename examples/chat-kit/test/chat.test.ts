import { describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { branchOf, createStore, memoryStorage, type Store } from '@colloquy/core'
import { createChat, messageText, replySteps, textOf } from '../src/index.js'

const setup = async (): Promise<{ store: Store; chat: ReturnType<typeof createChat> }> => {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  return { store, chat: createChat(store, { delayMs: 0 }) }
}
const transcript = async (store: Store, session_id: string): Promise<string[]> =>
  (await store.messages({ session_id })).messages.map(
    (m) => `${m.message!.role}: ${messageText(m.message).slice(0, 20)}`,
  )

/** Resolves once the reply to the chat's question has shown its first words. */
const replyStarted = (store: Store, session_id: string): Promise<unknown> =>
  firstValueFrom(
    store
      .messages$({ session_id })
      .pipe(filter((items) => items.length === 2 && messageText(items[1].message).length > 0)),
  )

describe('chat actions over a store', () => {
  it('send: names the chat, appends the question, streams a reply, working → done', async () => {
    const { store, chat } = await setup()
    const id = await chat.create()
    const statuses: string[] = []
    store.on('session::status-changed', { session_id: id }).subscribe((e) => statuses.push(e.status))
    const updates: number[] = []
    store.on('session::message-updated', { session_id: id }).subscribe((e) => updates.push(e.revision))
    await chat.send(id, 'Hello, local model')
    const meta = (await store.get({ session_id: id }))!.meta
    expect(meta.title).toBe('Hello, local model')
    expect(meta.message_count).toBe(2)
    expect(meta.status).toBe('done')
    expect(statuses).toEqual(['working', 'done'])
    expect(updates.length).toBeGreaterThan(5)
    const [question, answer] = (await store.messages({ session_id: id })).messages
    expect(messageText(question.message)).toBe('Hello, local model')
    expect(answer.message).toMatchObject({
      role: 'assistant',
      model: 'colloquy-local-1',
      usage: { input: 3 },
    })
  })

  it('edit the first message: a sibling branch under the hidden root, with its own reply', async () => {
    const { store, chat } = await setup()
    const id = await chat.create()
    await chat.send(id, 'first')
    const [first] = (await store.messages({ session_id: id })).messages
    await chat.edit(id, first.entry_id, 'second')
    expect(await transcript(store, id)).toEqual([
      expect.stringMatching(/^user: second/),
      expect.stringMatching(/^assistant: /),
    ])
    const tree = (await firstValueFrom(store.tree$(id)))!
    expect(branchOf(tree, first.entry_id)).toMatchObject({ index: 0, count: 2 })
    expect((await store.get({ session_id: id }))!.meta.message_count).toBe(4)
  })

  it('regenerate: a new assistant sibling with a different take, now active', async () => {
    const { store, chat } = await setup()
    const id = await chat.create()
    await chat.send(id, 'tell me a fact')
    const [, before] = (await store.messages({ session_id: id })).messages
    await chat.regenerate(id, before.entry_id)
    const [, after] = (await store.messages({ session_id: id })).messages
    expect(after.entry_id).not.toBe(before.entry_id)
    expect(after.message!.content).not.toEqual(before.message!.content)
    const tree = (await firstValueFrom(store.tree$(id)))!
    expect(branchOf(tree, after.entry_id)).toMatchObject({ index: 1, count: 2 })
  })

  it('fork: a new session with the path up to the message, titled as a fork', async () => {
    const { store, chat } = await setup()
    const id = await chat.create()
    await chat.send(id, 'one')
    await chat.send(id, 'two')
    const items = (await store.messages({ session_id: id })).messages
    const forked = await chat.fork(id, items[1].entry_id)
    const meta = (await store.get({ session_id: forked }))!.meta
    expect(meta).toMatchObject({ title: 'one (fork)', forked_from: id, message_count: 2 })
    expect(await transcript(store, forked)).toEqual(await transcript(store, id).then((t) => t.slice(0, 2)))
  })

  it('stop: ends the stream early and marks the session done, "stopped"', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const chat = createChat(store, { delayMs: 5 })
    const id = await chat.create()
    const sending = chat.send(id, 'a long story please')
    await replyStarted(store, id)
    chat.stop(id)
    await sending
    const meta = (await store.get({ session_id: id }))!.meta
    expect(meta).toMatchObject({ status: 'done', status_reason: 'stopped' })
    const [, answer] = (await store.messages({ session_id: id })).messages
    const full = [...replySteps({ prompt: 'a long story please', variant: 0, now: 0 })].at(-1)!
    expect(messageText(answer.message).length).toBeLessThan(textOf(full).length)
  })

  it('stop reaches the reply from another chat on the same database (another tab)', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const writer = createChat(store, { delayMs: 5 })
    const other = createChat(store)
    const id = await writer.create()
    const sending = writer.send(id, 'a long story please')
    await replyStarted(store, id)
    other.stop(id)
    await sending
    expect((await store.get({ session_id: id }))!.meta).toMatchObject({
      status: 'done',
      status_reason: 'stopped',
    })
  })

  it('rename and remove', async () => {
    const { store, chat } = await setup()
    const id = await chat.create()
    await chat.rename(id, '  Trip plans ')
    expect((await store.get({ session_id: id }))!.meta.title).toBe('Trip plans')
    await chat.remove(id)
    expect(await store.get({ session_id: id })).toBeNull()
  })
})
