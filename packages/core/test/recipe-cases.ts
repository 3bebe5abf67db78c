import { firstValueFrom } from 'rxjs'
import { expect, it } from 'vitest'
import {
  SessionError,
  type AssistantMessage,
  type ContentBlock,
  type MessageItem,
  type SessionEntry,
  type Store,
  type TextBlock,
} from '../src/index.js'
import { updateMessage } from '../src/recipe.js'

// The recipe form of update-message, run by the node suite (memory storage) and the browser suite
// (IndexedDB in Chromium): `open()` gives a fresh store, `reopen` (when given) another store over
// the same storage, to see what is on disk.

const call: ContentBlock = {
  type: 'function_call',
  id: 'call_1',
  function_id: 'search',
  arguments: { q: 'weather' },
}
const assistant = (content: ContentBlock[]): AssistantMessage => ({
  role: 'assistant',
  content,
  stop_reason: 'end',
  model: 'm',
  provider: 'p',
  timestamp: 1,
})
const macrotask = (): Promise<void> => new Promise((r) => setTimeout(r, 0))
const textOf = (e: SessionEntry | null | undefined): string =>
  e?.kind === 'message' ? e.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('') : ''

async function fixture(store: Store): Promise<{ session_id: string; entry_id: string; events: unknown[] }> {
  const { session_id } = await store.create({ title: 'recipe' })
  await store.append({
    session_id,
    message: { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 1 },
  })
  const { entry_id } = await store.append({
    session_id,
    message: assistant([{ type: 'text', text: '' }, call]),
  })
  const events: unknown[] = []
  store.on('session::message-updated', { session_id }).subscribe((p) => events.push(p))
  return { session_id, entry_id, events }
}

/** The stored message entry, as `getMessage` returns it. */
async function stored(
  store: Store,
  session_id: string,
  entry_id: string,
): Promise<{ message: AssistantMessage; revision: number }> {
  const res = await store.getMessage({ session_id, entry_id })
  if (res?.entry.kind !== 'message') throw new Error(`no message ${entry_id}`)
  return { message: res.entry.message as AssistantMessage, revision: res.entry.revision }
}

const append =
  (token: string) =>
  (draft: ContentBlock[]): void => {
    ;(draft[0] as TextBlock).text += token
  }

export function recipeSuite(open: () => Promise<Store>, reopen?: (store: Store) => Promise<Store>): void {
  it('streams tokens issued without awaiting, in order, none lost; one event and one revision per token', async () => {
    const store = await open()
    const { session_id, entry_id, events } = await fixture(store)
    const pending: Promise<unknown>[] = []
    let want = ''
    for (let i = 0; i < 120; i++) {
      want += `t${i} `
      pending.push(updateMessage(store, { session_id, entry_id }, append(`t${i} `)))
      // Some tokens in one tick, some a macrotask apart: both batch shapes.
      if (i % 3 === 0) await macrotask()
    }
    const answers = await Promise.all(pending)
    expect(answers.at(-1)).toEqual({ updated: true, revision: 120 })
    const { message } = await stored(store, session_id, entry_id)
    expect(message.content).toEqual([{ type: 'text', text: want }, call])
    expect(events).toHaveLength(120)
    expect((events.at(-1) as { revision: number; message: AssistantMessage }).revision).toBe(120)
    expect((events.at(-1) as { message: AssistantMessage }).message.content).toEqual([
      { type: 'text', text: want },
      call,
    ])
    if (reopen) {
      const again = await reopen(store)
      expect((await stored(again, session_id, entry_id)).message.content).toEqual([
        { type: 'text', text: want },
        call,
      ])
    }
  })

  it('keeps its place among plain updates issued in the same tick: none lost', async () => {
    const store = await open()
    const { session_id, entry_id, events } = await fixture(store)
    const answers = await Promise.all([
      store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'plain' }, call] }),
      updateMessage(store, { session_id, entry_id }, append('+recipe')),
      store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'again' }, call] }),
      updateMessage(store, { session_id, entry_id }, append('!')),
    ])
    expect(answers.map((a) => a.revision)).toStrictEqual([1, 2, 3, 4])
    expect(
      events.map((e) =>
        textOf({ kind: 'message', message: (e as { message: AssistantMessage }).message } as SessionEntry),
      ),
    ).toStrictEqual(['plain', 'plain+recipe', 'again', 'again!'])
    expect(textOf((await store.getMessage({ session_id, entry_id }))?.entry)).toBe('again!')
    await store.close()
  })

  it('keeps the identity of untouched blocks across messages$ and entry$ emissions', async () => {
    const store = await open()
    const { session_id, entry_id } = await fixture(store)
    const lists: MessageItem[][] = []
    const entries: (SessionEntry | null)[] = []
    const subs = [
      store.messages$({ session_id }).subscribe((l) => lists.push(l)),
      store.entry$(session_id, entry_id).subscribe((e) => entries.push(e)),
    ]
    await firstValueFrom(store.messages$({ session_id }))
    for (let i = 0; i < 20; i++) await updateMessage(store, { session_id, entry_id }, append(`w${i} `))
    subs.forEach((s) => s.unsubscribe())

    expect(entries).toHaveLength(21)
    expect(lists).toHaveLength(21)
    const blocks = entries.map((e) => (e?.kind === 'message' ? e.message.content : []))
    // Every emission after the first recipe holds the same tool-call object; the text is new each time.
    for (let i = 2; i < blocks.length; i++) {
      expect(blocks[i][1]).toBe(blocks[1][1])
      expect(blocks[i][0]).not.toBe(blocks[i - 1][0])
      expect(lists[i][1].message!.content[1]).toBe(blocks[1][1])
      // The user's message item is untouched by any of it.
      expect(lists[i][0]).toBe(lists[0][0])
    }
    expect(blocks[1][1]).toEqual(call)
    expect(textOf(entries.at(-1))).toBe(Array.from({ length: 20 }, (_, i) => `w${i} `).join(''))
    // Stored content stays frozen: what a subscriber holds cannot change what was stored.
    expect(Object.isFrozen(blocks.at(-1))).toBe(true)
    expect(Object.isFrozen(blocks.at(-1)![0])).toBe(true)
  })

  it('takes new content returned by the recipe, and adds blocks', async () => {
    const store = await open()
    const { session_id, entry_id } = await fixture(store)
    await updateMessage(store, { session_id, entry_id }, (draft) => [
      ...draft,
      { type: 'text', text: 'after the call' },
    ])
    await updateMessage(store, { session_id, entry_id, usage: { input: 3, output: 4 } }, (draft) => {
      draft.push({ type: 'thinking', text: 'hmm' })
    })
    const { message } = await stored(store, session_id, entry_id)
    expect(message.content).toEqual([
      { type: 'text', text: '' },
      call,
      { type: 'text', text: 'after the call' },
      { type: 'thinking', text: 'hmm' },
    ])
    expect(message.usage).toEqual({ input: 3, output: 4 })
  })

  it('a recipe that throws writes nothing and its error surfaces; the stream goes on after it', async () => {
    const store = await open()
    const { session_id, entry_id, events } = await fixture(store)
    await updateMessage(store, { session_id, entry_id }, append('one '))
    const boom = new Error('the recipe broke')
    const pending = [
      updateMessage(store, { session_id, entry_id }, append('two ')),
      updateMessage(store, { session_id, entry_id }, (draft) => {
        ;(draft[0] as TextBlock).text += 'half-done '
        throw boom
      }),
      updateMessage(store, { session_id, entry_id }, append('three')),
    ]
    const settled = await Promise.allSettled(pending)
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((settled[1] as PromiseRejectedResult).reason).toBe(boom)
    const { message, revision } = await stored(store, session_id, entry_id)
    expect((message.content[0] as TextBlock).text).toBe('one two three')
    expect(revision).toBe(3)
    expect(events).toHaveLength(3)
  })

  it('content the recipe makes invalid is refused by the validator, naming the field; nothing written', async () => {
    const store = await open()
    const { session_id, entry_id, events } = await fixture(store)
    const before = await store.getMessage({ session_id, entry_id })
    const refused = async (
      recipe: (draft: ContentBlock[]) => ContentBlock[] | void,
      field: string,
    ): Promise<void> => {
      const e = await updateMessage(store, { session_id, entry_id }, recipe as never).then(
        () => undefined,
        (x: unknown) => x,
      )
      expect(e).toBeInstanceOf(SessionError)
      expect((e as SessionError).code).toBe('session/invalid_request')
      expect((e as SessionError).message).toContain(field)
    }
    await refused((draft) => void draft.push({ type: 'text', text: 42 } as never), 'content[2].text')
    await refused(
      (draft) => void ((draft[1] as { function_id: string }).function_id = 'x'.repeat(300)),
      'content[1].function_id',
    )
    await refused(() => ({ not: 'an array' }) as never, 'content')
    await refused((draft) => void draft.push({ type: 'video' } as never), 'content[2].type')
    expect(await store.getMessage({ session_id, entry_id })).toEqual(before)
    expect(events).toHaveLength(0)
  })

  it('refuses what updateMessage refuses, with its codes, before running the recipe', async () => {
    const store = await open()
    const { session_id, entry_id, events } = await fixture(store)
    let ran = 0
    const recipe = (): void => void ran++
    const code = (p: Promise<unknown>): Promise<string | undefined> =>
      p.then(
        () => undefined,
        (e: unknown) => (e instanceof SessionError ? e.code : String(e)),
      )
    expect(await code(updateMessage(store, { session_id, entry_id: 'e_nope' }, recipe))).toBe(
      'session/entry_not_found',
    )
    expect(await code(updateMessage(store, { session_id: 's_nope', entry_id }, recipe))).toBe(
      'session/not_found',
    )
    expect(await code(updateMessage(store, { session_id, entry_id: 'q\ud800' }, recipe))).toBe(
      'session/invalid_request',
    )
    expect(await code(updateMessage(store, { session_id, entry_id, usage: { input: -1 } }, recipe))).toBe(
      'session/invalid_request',
    )
    expect(await code(updateMessage(store, null as never, recipe))).toBe('session/invalid_request')
    expect(await code(updateMessage(store, { session_id, entry_id }, 'not a function' as never))).toBe(
      'session/invalid_request',
    )
    const { entry_id: custom } = await store.append({ session_id, custom: { custom_type: 'note', data: 1 } })
    expect(await code(updateMessage(store, { session_id, entry_id: custom }, recipe))).toBe(
      'session/invalid_entry_kind',
    )
    // A stale revision: answered as updateMessage answers it, without running the recipe.
    expect(await updateMessage(store, { session_id, entry_id, expected_revision: 7 }, recipe)).toEqual({
      updated: false,
      revision: 0,
    })
    expect(ran).toBe(0)
    expect(events).toHaveLength(0)
    expect(await updateMessage(store, { session_id, entry_id, expected_revision: 0 }, recipe)).toEqual({
      updated: true,
      revision: 1,
    })
    expect(ran).toBe(1)
    // A closed store refuses it as it refuses updateMessage, and writes nothing.
    await store.close()
    expect(await code(updateMessage(store, { session_id, entry_id }, recipe))).toBe('session/storage')
    expect(await code(store.updateMessage({ session_id, entry_id, content: [] }))).toBe('session/storage')
    expect(ran).toBe(1)
  })
}
