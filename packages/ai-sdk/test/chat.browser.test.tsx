// Updates arrive from the store (other tabs, streamed chunks) outside act(): the tests wait for
// what the user would see instead, so React's act environment is left off.
import { memo, type ReactNode } from 'react'
import { act, cleanup, render } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { useChat, type Chat, type UseChatHelpers } from '@ai-sdk/react'
import type { UIMessage } from 'ai'
import type { Store } from '@colloquy/core'
import { ColloquyProvider, useBranch } from '@colloquy/react'
import { createThread, INTERRUPTED_REASON } from '@colloquy/parts'
import { ColloquyChat } from '../src/index.js'
import { appendExchanges, gate, interruptedThread, tabs, until } from '../../../test/support/streaming.js'
import { tokenTransport } from './transport.js'
import { twoTabChats } from './two-tabs.js'

afterEach(cleanup)

const renders = new Map<string, number>()
const textOf = (m: UIMessage): string => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
const transcript = (chat: { messages: UIMessage[] }): string[] =>
  chat.messages.map((m) => `${m.role}:${textOf(m)}`)

/** A row with the session's own branch picker (`useBranch`) beside the SDK's message. */
const Row = memo(function Row({
  session_id,
  message,
}: {
  session_id: string
  message: UIMessage
}): ReactNode {
  renders.set(message.id, (renders.get(message.id) ?? 0) + 1)
  return (
    <div data-message={message.id}>
      {textOf(message)}
      <Picker session_id={session_id} id={message.id} />
    </div>
  )
})

function Picker({ session_id, id }: { session_id: string; id: string }): ReactNode {
  const b = useBranch(session_id, id).data
  if (!b || b.count < 2) return null
  return (
    <span data-picker>
      <button onClick={() => void b.prev()}>‹</button>
      {b.index + 1}/{b.count}
      <button onClick={() => void b.next()}>›</button>
    </span>
  )
}

function ChatView({
  chat,
  onHelpers,
}: {
  chat: ColloquyChat
  onHelpers: (h: UseChatHelpers<UIMessage>) => void
}): ReactNode {
  const helpers = useChat({ chat: chat as unknown as Chat<UIMessage> })
  onHelpers(helpers)
  return helpers.messages.map((m) => <Row key={m.id} session_id={chat.session_id} message={m} />)
}

function mount(store: Store, chat: ColloquyChat): () => UseChatHelpers<UIMessage> {
  let helpers!: UseChatHelpers<UIMessage>
  render(
    <ColloquyProvider store={store}>
      <ChatView chat={chat} onHelpers={(h) => (helpers = h)} />
    </ColloquyProvider>,
  )
  return () => helpers
}

const statusOf = async (store: Store, session_id: string): Promise<string | undefined> =>
  (await store.get({ session_id }))?.meta.status

describe('ColloquyChat under useChat', () => {
  it('persists a reply under the SDK ids; an edit is a sibling the picker flips; the branch survives a reload', async () => {
    const db = tabs('aisdk-branch')
    const store = await db.open()
    const sid = await createThread(store)
    const transport = tokenTransport(3)
    const chat = new ColloquyChat({ store, session_id: sid, transport })
    await chat.ready
    const ui = mount(store, chat)
    const seen: string[] = []
    chat['~registerStatusCallback'](() => seen.push(chat.status))
    await act(() => ui().sendMessage({ text: 'first question' }))
    await until(
      () => ui().status === 'ready' && transcript(ui()).join() === 'user:first question,assistant:t0 t1 t2',
    )
    expect(seen).toEqual(['submitted', 'streaming', 'ready'])
    await chat.flush()
    const stored = (await store.messages({ session_id: sid })).messages
    expect(stored.map((i) => i.entry_id)).toEqual(ui().messages.map((m) => m.id))
    expect(stored[1].message).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 't0 t1 t2' }],
    })
    expect((await store.get({ session_id: sid }))!.meta).toMatchObject({
      title: 'first question',
      status: 'done',
    })

    // Edit as the SDK documents it: sendMessage with the message's id.
    const original = ui().messages[0].id
    await act(() => ui().sendMessage({ text: 'edited question', messageId: original }))
    await until(
      () => ui().status === 'ready' && transcript(ui()).join() === 'user:edited question,assistant:t0 t1 t2',
    )
    await chat.flush()
    const edited = ui().messages[0].id
    expect(edited).not.toBe(original)
    // The request carried the new path, and the SDK's edit trigger.
    expect(transport.requests.at(-1)).toMatchObject({
      trigger: 'submit-message',
      messageId: original,
      ids: [edited],
    })
    const tree = (await firstValueFrom(store.tree$(sid)))!
    expect(tree.entries.get(edited)!.parent_id).toBe(tree.entries.get(original)!.parent_id)
    await until(
      () => document.querySelector(`[data-message="${edited}"] [data-picker]`)?.textContent === '‹2/2›',
    )

    // The session's picker flips the chat back.
    await act(async () =>
      (
        document.querySelector(`[data-message="${edited}"] [data-picker] button`) as HTMLButtonElement
      ).click(),
    )
    await until(() => transcript(ui()).join() === 'user:first question,assistant:t0 t1 t2')
    expect(ui().messages.map((m) => m.id)).toEqual(stored.map((i) => i.entry_id))

    // Reload: a new store and a new chat on the same session.
    cleanup()
    chat.close()
    await store.close()
    const again = await db.open()
    const chat2 = new ColloquyChat({ store: again, session_id: sid, transport })
    await chat2.ready
    expect(transcript(chat2)).toEqual(['user:first question', 'assistant:t0 t1 t2'])
    chat2.close()
    await again.close()
    db.drop()
  })

  it('regenerate keeps the old reply as a sibling', async () => {
    const db = tabs('aisdk-regen')
    const store = await db.open()
    const sid = await createThread(store)
    let n = 0
    const chat = new ColloquyChat({
      store,
      session_id: sid,
      transport: tokenTransport(2, { prefix: () => `r${n++}_` }),
    })
    await chat.ready
    const ui = mount(store, chat)
    await act(() => ui().sendMessage({ text: 'q' }))
    await until(() => ui().status === 'ready' && transcript(ui()).join() === 'user:q,assistant:r0_0 r0_1')
    const first = ui().messages[1].id
    await act(() => ui().regenerate())
    await until(() => ui().status === 'ready' && transcript(ui()).join() === 'user:q,assistant:r1_0 r1_1')
    const second = ui().messages[1].id
    expect(second).not.toBe(first)
    await chat.flush()
    const tree = (await firstValueFrom(store.tree$(sid)))!
    expect(tree.children.get(ui().messages[0].id)).toEqual([first, second])
    await until(
      () => document.querySelector(`[data-message="${second}"] [data-picker]`)?.textContent === '‹2/2›',
    )
    cleanup()
    chat.close()
    await store.close()
    db.drop()
  })

  it('a second tab shows the stream live as streaming, and Stop there stops it', async () => {
    const { db, a, b, sid, hold, chatA, chatB } = await twoTabChats('aisdk-tabs', 3, 1)
    const uiA = mount(a, chatA)
    const uiB = mount(b, chatB)
    void uiA().sendMessage({ text: 'from tab A' })
    await until(() => transcript(uiB()).join() === 'user:from tab A,assistant:t0 t1 t2')
    expect(uiB().status).toBe('streaming')
    hold.open()
    await until(() => uiB().status === 'ready' && transcript(uiB()).at(-1) === 'assistant:t0 t1 t2 t3 t4 t5')
    await until(() => uiA().status === 'ready')

    // Stop pressed in tab B ends the reply tab A is writing.
    const hold2 = gate()
    const chatA2 = new ColloquyChat({
      store: a,
      session_id: sid,
      transport: tokenTransport(6, { hold: hold2, holdAt: 2 }),
    })
    await chatA2.ready
    void chatA2.sendMessage({ text: 'again' })
    await until(() => chatB.status === 'streaming' && transcript(chatB).at(-1) === 'assistant:t0 t1')
    await chatB.stop()
    await until(() => chatA2.status === 'ready')
    hold2.open()
    let status: string | undefined
    await until(() => {
      void statusOf(a, sid).then((s) => (status = s))
      return status === 'done'
    })
    expect((await a.get({ session_id: sid }))!.meta.status_reason).toBe('stopped')
    expect(transcript(chatA2).at(-1)).toBe('assistant:t0 t1')
    await until(() => chatB.status === 'ready' && transcript(chatB).at(-1) === 'assistant:t0 t1')
    cleanup()
    for (const c of [chatA, chatB, chatA2]) c.close()
    await a.close()
    await b.close()
    db.drop()
  })

  it('a reload mid-stream shows what had arrived and marks the reply interrupted', async () => {
    const db = tabs('aisdk-reload')
    const sid = await interruptedThread(db)
    const store = await db.open()
    const chat = new ColloquyChat({ store, session_id: sid, transport: tokenTransport(2) })
    await chat.ready
    await until(() => chat.status === 'error')
    expect(transcript(chat)).toEqual(['user:q', 'assistant:half a rep'])
    expect(chat.error?.message).toBe(INTERRUPTED_REASON)
    // Sending again works as after any error.
    await chat.sendMessage({ text: 'go on' })
    await until(() => chat.status === 'ready' && transcript(chat).length === 4)
    expect(chat.error).toBeUndefined()
    chat.close()
    await store.close()
    db.drop()
  })

  it('switching to another thread mid-stream does not write into it', async () => {
    const db = tabs('aisdk-switch')
    const store = await db.open()
    const one = await createThread(store)
    const two = await createThread(store)
    const hold = gate()
    const chatOne = new ColloquyChat({
      store,
      session_id: one,
      transport: tokenTransport(4, { hold, holdAt: 2 }),
    })
    await chatOne.ready
    const done = chatOne.sendMessage({ text: 'in one' })
    await until(() => transcript(chatOne).at(-1) === 'assistant:t0 t1')
    // The app switches: a chat on the other session, the old one left to finish.
    const chatTwo = new ColloquyChat({ store, session_id: two, transport: tokenTransport(1) })
    await chatTwo.ready
    hold.open()
    await done
    await until(() => chatOne.status === 'ready')
    let status: string | undefined
    await until(() => {
      void statusOf(store, one).then((s) => (status = s))
      return status === 'done'
    })
    expect((await store.messages({ session_id: two })).messages).toEqual([])
    expect(chatTwo.messages).toEqual([])
    expect((await store.messages({ session_id: one })).messages.map((i) => i.message!.content)).toEqual([
      [{ type: 'text', text: 'in one' }],
      [{ type: 'text', text: 't0 t1 t2 t3' }],
    ])
    chatOne.close()
    chatTwo.close()
    await store.close()
    db.drop()
  })

  it('ids never duplicate: edits get fresh ids, a resent id is not appended twice, chat ids are entry ids', async () => {
    const db = tabs('aisdk-ids')
    const store = await db.open()
    const sid = await createThread(store)
    const chat = new ColloquyChat({ store, session_id: sid, transport: tokenTransport(2) })
    await chat.ready
    const check = (): void => {
      const ids = chat.messages.map((m) => m.id)
      expect(new Set(ids).size).toBe(ids.length)
    }
    chat['~registerMessagesCallback'](check)
    await chat.sendMessage({ text: 'one' })
    await chat.sendMessage({ text: 'two' })
    const two = chat.messages[2].id
    await chat.sendMessage({ text: 'two, edited', messageId: two })
    await chat.sendMessage({ text: 'two, edited again', messageId: chat.messages[2].id })
    await chat.regenerate()
    await until(() => chat.status === 'ready')
    // A message the SDK re-sends under an id the session already holds is not stored twice.
    await chat.sendMessage({
      id: chat.messages[0].id,
      role: 'user',
      parts: [{ type: 'text', text: 'replayed' }],
    } as never)
    await until(() => chat.status === 'ready')
    await chat.flush()
    const tree = (await firstValueFrom(store.tree$(sid)))!
    const entryIds = [...tree.entries.keys()]
    expect(new Set(entryIds).size).toBe(entryIds.length)
    expect(tree.children.get(tree.entries.get(two)!.parent_id)!.length).toBe(3)
    const path = (await store.messages({ session_id: sid })).messages.map((i) => i.entry_id)
    expect(chat.messages.map((m) => m.id)).toEqual(path)
    chat.close()
    await store.close()
    db.drop()
  })

  it('500 streamed chunks re-render only the streaming message', async () => {
    const db = tabs('aisdk-renders')
    const store = await db.open()
    const sid = await createThread(store)
    await appendExchanges(store, sid, 10)
    const chat = new ColloquyChat({ store, session_id: sid, transport: tokenTransport(500) })
    await chat.ready
    const ui = mount(store, chat)
    await until(() => ui().messages.length === 20)
    const before = new Map(renders)
    const old = ui().messages.map((m) => m.id)
    await act(() => ui().sendMessage({ text: 'long one' }))
    await until(() => ui().status === 'ready' && textOf(ui().messages[21]).endsWith('t499'), 60_000)
    const streaming = ui().messages[21].id
    await chat.flush()
    for (const id of old) expect(renders.get(id), `message ${id}`).toBe(before.get(id))
    const own = renders.get(streaming) ?? 0
    expect(own).toBeGreaterThan(10)
    expect(own).toBeLessThanOrEqual(510)
    expect((await store.getMessage({ session_id: sid, entry_id: streaming }))!.entry).toMatchObject({
      message: { content: [{ type: 'text', text: textOf(ui().messages[21]) }] },
    })
    cleanup()
    chat.close()
    await store.close()
    db.drop()
  })
})
