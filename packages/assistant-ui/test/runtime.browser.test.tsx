// Updates arrive from the store (other tabs, streamed chunks) outside act(): the tests wait for
// what the user would see instead, so React's act environment is left off.
import { act, cleanup, render } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
import type { Store } from '@colloquy/core'
import { createThread, INTERRUPTED_REASON } from '@colloquy/parts'
import type {
  AssistantRuntime,
  ExportedMessageRepository,
  ExternalStoreAdapter,
  ThreadMessage,
} from '@assistant-ui/react'
import { appendExchanges, gate, interruptedThread, tabs, until } from '../../../test/support/streaming.js'
import { Harness, renders, tokenModel } from './harness.js'

afterEach(cleanup)

const textOf = (m: ThreadMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
const transcript = (r: AssistantRuntime): string[] =>
  r.thread.getState().messages.map((m) => `${m.role}:${textOf(m)}`)
/** Every write the runtime issued has committed, and React has rendered what it changed. */
const settle = (store: Store): Promise<void> => act(() => store.flush())

/** Mounts a thread on `store` and returns its live runtime. */
function mount(
  store: Store,
  session_id: string | null,
  model = tokenModel(3),
): { runtime: () => AssistantRuntime; rerender: (sid: string | null) => void; sessions: (string | null)[] } {
  let runtime!: AssistantRuntime
  const sessions: (string | null)[] = []
  const props = {
    store,
    model,
    onRuntime: (r: AssistantRuntime) => (runtime = r),
    onSessionChange: (id: string | null) => sessions.push(id),
  }
  const view = render(<Harness {...props} session_id={session_id} />)
  return {
    runtime: () => runtime,
    rerender: (sid) => view.rerender(<Harness {...props} session_id={sid} />),
    sessions,
  }
}

async function send(runtime: AssistantRuntime, text: string): Promise<void> {
  await act(async () => runtime.thread.append({ role: 'user', content: [{ type: 'text', text }] }))
}

describe('useColloquyRuntime', () => {
  it('streams a reply into the store; an edit is a sibling, the picker flips, the chosen branch survives a reload', async () => {
    const db = tabs('aui-branch')
    const store = await db.open()
    const sid = await createThread(store)
    const view = mount(store, sid)
    await send(view.runtime(), 'first question')
    await until(
      () => view.runtime().thread.getState().isRunning === false && transcript(view.runtime()).length === 2,
    )
    await settle(store)
    expect(transcript(view.runtime())).toEqual(['user:first question', 'assistant:t0 t1 t2'])
    const stored = (await store.messages({ session_id: sid })).messages
    expect(stored.map((i) => i.message?.role)).toEqual(['user', 'assistant'])
    // The runtime's ids are the entries' ids: nothing is swapped after streaming.
    expect(
      view
        .runtime()
        .thread.getState()
        .messages.map((m) => m.id),
    ).toEqual(stored.map((i) => i.entry_id))

    // Edit the question through the message's edit composer.
    const q = view.runtime().thread.getMessageByIndex(0)
    await act(async () => {
      q.composer.beginEdit()
      q.composer.setText('edited question')
      await q.composer.send()
    })
    await until(
      () =>
        transcript(view.runtime())[0] === 'user:edited question' &&
        view.runtime().thread.getState().isRunning === false &&
        transcript(view.runtime()).length === 2,
    )
    await settle(store)
    const edited = view.runtime().thread.getMessageByIndex(0).getState()
    expect(edited.branchNumber).toBe(2)
    expect(edited.branchCount).toBe(2)
    expect(edited.id).not.toBe(stored[0].entry_id)
    // Siblings in the store: both questions hang under the same parent.
    const tree = (await firstValueFrom(store.tree$(sid)))!
    expect(tree.entries.get(edited.id)!.parent_id).toBe(tree.entries.get(stored[0].entry_id)!.parent_id)
    expect(document.querySelector(`[data-message="${edited.id}"] [data-picker]`)?.textContent).toContain(
      '2/2',
    )

    // Flip back with the picker's own button.
    await act(async () =>
      (
        document.querySelector(`[data-message="${edited.id}"] [data-picker] button`) as HTMLButtonElement
      ).click(),
    )
    await until(() => transcript(view.runtime())[0] === 'user:first question')
    await settle(store)
    expect(transcript(view.runtime())).toEqual(['user:first question', 'assistant:t0 t1 t2'])
    const leaf = (await firstValueFrom(store.tree$(sid)))!.active_leaf
    expect(leaf).toBe(stored[1].entry_id)

    // "Reload": a new store on the same database, a new runtime.
    cleanup()
    await store.close()
    const again = await db.open()
    const view2 = mount(again, sid)
    await until(() => transcript(view2.runtime()).length === 2)
    expect(transcript(view2.runtime())).toEqual(['user:first question', 'assistant:t0 t1 t2'])
    expect(view2.runtime().thread.getMessageByIndex(0).getState()).toMatchObject({
      branchNumber: 1,
      branchCount: 2,
    })
    cleanup()
    await again.close()
    db.drop()
  })

  it('regenerate keeps the old reply as a sibling', async () => {
    const db = tabs('aui-regen')
    const store = await db.open()
    const sid = await createThread(store)
    let n = 0
    const model = {
      run: (o: Parameters<ReturnType<typeof tokenModel>['run']>[0]) =>
        tokenModel(2, undefined, 0, `r${n++}_`).run(o),
    }
    const view = mount(store, sid, model)
    await send(view.runtime(), 'q')
    await until(
      () =>
        transcript(view.runtime()).join() === 'user:q,assistant:r0_0 r0_1' &&
        !view.runtime().thread.getState().isRunning,
    )
    await settle(store)
    const first = view.runtime().thread.getMessageByIndex(1).getState().id
    await act(async () => view.runtime().thread.getMessageByIndex(1).reload())
    await until(
      () =>
        transcript(view.runtime()).join() === 'user:q,assistant:r1_0 r1_1' &&
        !view.runtime().thread.getState().isRunning,
    )
    await settle(store)
    const second = view.runtime().thread.getMessageByIndex(1).getState()
    expect(second.id).not.toBe(first)
    expect(second).toMatchObject({ branchNumber: 2, branchCount: 2 })
    const tree = (await firstValueFrom(store.tree$(sid)))!
    expect(tree.entries.get(first)!.parent_id).toBe(tree.entries.get(second.id)!.parent_id)
    await act(async () => view.runtime().thread.getMessageByIndex(1).switchToBranch({ position: 'previous' }))
    await until(() => transcript(view.runtime())[1] === 'assistant:r0_0 r0_1')
    cleanup()
    await store.close()
    db.drop()
  })

  it('a second tab shows the stream live with isRunning, and both settle when it ends', async () => {
    const db = tabs('aui-tabs')
    const a = await db.open()
    const b = await db.open()
    const sid = await createThread(a)
    const hold = gate()
    const tabA = mount(a, sid, tokenModel(6, hold, 3))
    const tabB = mount(b, sid)
    await send(tabA.runtime(), 'from tab A')
    // Tab B sees the question, the partial reply and a running thread while A streams.
    await until(() => transcript(tabB.runtime()).join() === 'user:from tab A,assistant:t0 t1 t2')
    expect(tabB.runtime().thread.getState().isRunning).toBe(true)
    expect(tabA.runtime().thread.getState().isRunning).toBe(true)
    hold.open()
    await until(
      () =>
        transcript(tabB.runtime())[1] === 'assistant:t0 t1 t2 t3 t4 t5' &&
        !tabB.runtime().thread.getState().isRunning,
    )
    await until(() => !tabA.runtime().thread.getState().isRunning)
    // Stop from the other tab: B cancels a reply A is writing.
    const hold2 = gate()
    cleanup()
    const tabA2 = mount(a, sid, tokenModel(6, hold2, 2))
    const tabB2 = mount(b, sid)
    await send(tabA2.runtime(), 'again')
    await until(
      () =>
        tabB2.runtime().thread.getState().isRunning &&
        transcript(tabB2.runtime()).at(-1) === 'assistant:t0 t1',
    )
    await act(async () => tabB2.runtime().thread.cancelRun())
    hold2.open()
    await until(
      () => !tabA2.runtime().thread.getState().isRunning && !tabB2.runtime().thread.getState().isRunning,
    )
    expect((await a.get({ session_id: sid }))!.meta).toMatchObject({
      status: 'done',
      status_reason: 'stopped',
    })
    expect(transcript(tabA2.runtime()).at(-1)).toBe('assistant:t0 t1')
    expect(tabA2.runtime().thread.getState().messages.at(-1)!.status).toMatchObject({
      type: 'incomplete',
      reason: 'cancelled',
    })
    cleanup()
    await a.close()
    await b.close()
    db.drop()
  })

  it('a reload mid-stream keeps the partial reply and marks it interrupted', async () => {
    const db = tabs('aui-reload')
    const sid = await interruptedThread(db)
    const store = await db.open()
    const view = mount(store, sid)
    await until(
      () =>
        transcript(view.runtime()).join() === 'user:q,assistant:half a rep' &&
        !view.runtime().thread.getState().isRunning,
    )
    expect((await store.get({ session_id: sid }))!.meta).toMatchObject({
      status: 'error',
      status_reason: INTERRUPTED_REASON,
    })
    expect(view.runtime().thread.getState().messages[1].status).toMatchObject({
      type: 'incomplete',
      reason: 'error',
    })
    cleanup()
    await store.close()
    db.drop()
  })

  it('switching thread mid-stream does not write into the other thread', async () => {
    const db = tabs('aui-switch')
    const store = await db.open()
    const one = await createThread(store)
    const two = await createThread(store)
    const hold = gate()
    const view = mount(store, one, tokenModel(4, hold, 2))
    await send(view.runtime(), 'in one')
    await until(() => transcript(view.runtime()).at(-1) === 'assistant:t0 t1')
    await act(async () => view.rerender(two))
    await until(() => transcript(view.runtime()).length === 0)
    hold.open()
    let status = ''
    store.session$(one).subscribe((m) => (status = m?.status ?? ''))
    await until(() => status === 'done')
    expect((await store.messages({ session_id: two })).messages).toEqual([])
    const inOne = (await store.messages({ session_id: one })).messages
    expect(inOne.map((i) => i.message!.content)).toEqual([
      [{ type: 'text', text: 'in one' }],
      [{ type: 'text', text: 't0 t1 t2 t3' }],
    ])
    expect((await store.get({ session_id: one }))!.meta.status).toBe('done')
    await act(async () => view.rerender(one))
    await until(() => transcript(view.runtime()).join() === 'user:in one,assistant:t0 t1 t2 t3')
    cleanup()
    await store.close()
    db.drop()
  })

  it('a thread named before its store opens shows the session once the store arrives', async () => {
    const db = tabs('aui-late-store')
    const store = await db.open()
    const sid = await createThread(store)
    await store.append({
      session_id: sid,
      message: { role: 'user', content: [{ type: 'text', text: 'asked earlier' }], timestamp: 1 },
    })
    let runtime!: AssistantRuntime
    const props = { session_id: sid, model: tokenModel(1), onRuntime: (r: AssistantRuntime) => (runtime = r) }
    const view = render(<Harness store={null} {...props} />)
    expect(transcript(runtime)).toEqual([])
    await act(async () => view.rerender(<Harness store={store} {...props} />))
    await until(() => transcript(runtime).join() === 'user:asked earlier')
    cleanup()
    await store.close()
    db.drop()
  })

  it('ids never duplicate: the streaming reply keeps one id, no phantom siblings, the repository exports unique ids', async () => {
    const db = tabs('aui-ids')
    const store = await db.open()
    const view = mount(store, null, tokenModel(5))
    // No session yet: the first message creates one.
    await send(view.runtime(), 'hello')
    await until(() => view.sessions.length === 1)
    view.rerender(view.sessions[0])
    const sid = view.sessions[0]!
    const seen = new Set<string>()
    // The listener only records (an `expect` thrown inside it would not reach this test).
    const duplicated: string[][] = []
    const stop = view.runtime().thread.subscribe(() => {
      const msgs = view.runtime().thread.getState().messages
      for (const m of msgs) if (m.role === 'assistant' && !m.metadata.isOptimistic) seen.add(m.id)
      const ids = msgs.map((m) => m.id)
      if (new Set(ids).size !== ids.length) duplicated.push(ids)
    })
    await until(
      () =>
        transcript(view.runtime()).join() === 'user:hello,assistant:t0 t1 t2 t3 t4' &&
        !view.runtime().thread.getState().isRunning,
    )
    await settle(store)
    stop()
    expect(duplicated).toEqual([])
    const reply = view.runtime().thread.getMessageByIndex(1).getState()
    expect(reply.branchCount).toBe(1)
    expect([...seen]).toEqual([reply.id])
    const exported = view.runtime().thread.export()
    const ids = exported.messages.map((m) => m.message.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.sort()).toEqual(
      (await store.messages({ session_id: sid })).messages.map((i) => i.entry_id).sort(),
    )
    cleanup()
    await store.close()
    db.drop()
  })

  it('the store catching up with the streaming reply hands the runtime nothing new: a chunk changes its message once', async () => {
    const db = tabs('aui-echo')
    const store = await db.open()
    const sid = await createThread(store)
    const hold = gate()
    const view = mount(store, sid, tokenModel(4, hold, 2))
    await send(view.runtime(), 'hold on')
    await until(() => transcript(view.runtime()).at(-1) === 'assistant:t0 t1')
    const shown = view.runtime().thread.getState().messages.at(-1)!
    // The store's copy of the reply, as its writes commit (after the chunk was shown from memory).
    let stored = ''
    const sub = store.entry$(sid, shown.id).subscribe((e) => {
      stored =
        e?.kind === 'message' ? e.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('') : ''
    })
    await act(async () => until(() => stored === 't0 t1'))
    expect(view.runtime().thread.getState().messages.at(-1)).toBe(shown)
    sub.unsubscribe()
    hold.open()
    await until(
      () =>
        transcript(view.runtime()).at(-1) === 'assistant:t0 t1 t2 t3' &&
        !view.runtime().thread.getState().isRunning,
    )
    cleanup()
    await store.close()
    db.drop()
  })

  it('500 streamed chunks re-render only the streaming message', async () => {
    const db = tabs('aui-renders')
    const store = await db.open()
    const sid = await createThread(store)
    await appendExchanges(store, sid, 10)
    const view = mount(store, sid, tokenModel(500))
    await until(() => transcript(view.runtime()).length === 20)
    await settle(store)
    await send(view.runtime(), 'long one')
    await until(() => transcript(view.runtime()).length === 22)
    await settle(store)
    const before = new Map(renders)
    const old = view
      .runtime()
      .thread.getState()
      .messages.slice(0, 21)
      .map((m) => m.id)
    await until(
      () =>
        !view.runtime().thread.getState().isRunning &&
        textOf(view.runtime().thread.getState().messages[21]).endsWith('t499'),
      60_000,
    )
    await settle(store)
    const streaming = view.runtime().thread.getState().messages[21].id
    for (const id of old) expect(renders.get(id), `message ${id}`).toBe(before.get(id))
    const own = (renders.get(streaming) ?? 0) - (before.get(streaming) ?? 0)
    expect(own).toBeGreaterThan(10)
    expect(own).toBeLessThanOrEqual(510)
    cleanup()
    await store.close()
    db.drop()
  })

  it("a streamed chunk hands the runtime one new message: the repository is not rebuilt per chunk, and the hook's component does not re-render", async () => {
    const db = tabs('aui-repository')
    const store = await db.open()
    const sid = await createThread(store)
    await appendExchanges(store, sid, 10)
    let runtime!: AssistantRuntime
    let hostRenders = 0
    render(
      <Harness
        store={store}
        session_id={sid}
        model={tokenModel(200)}
        onRuntime={(r) => {
          runtime = r
          hostRenders++
        }}
      />,
    )
    await until(() => transcript(runtime).length === 20)
    // Every repository the runtime is handed, whoever hands it (the hook, or assistant-ui's own effect).
    const core = (
      runtime as unknown as { _core: { setAdapter(a: ExternalStoreAdapter<ThreadMessage>): void } }
    )._core
    const handed: ExportedMessageRepository[] = []
    const setAdapter = core.setAdapter.bind(core)
    core.setAdapter = (a) => {
      if (a.messageRepository) handed.push(a.messageRepository)
      setAdapter(a)
    }
    await send(runtime, 'long one')
    const rendersAtSend = hostRenders
    await until(
      () =>
        !runtime.thread.getState().isRunning &&
        textOf(
          runtime.thread.getState().messages[21] ?? ({ content: [] } as unknown as ThreadMessage),
        ).endsWith('t199'),
      60_000,
    )
    // Items made anew for each repository handed over: the streaming message only (and the
    // question, once), not the 20 messages before them.
    let fresh = 0
    for (let i = 1; i < handed.length; i++) {
      const before = new Set(handed[i - 1].messages)
      fresh += handed[i].messages.filter((item) => !before.has(item)).length
    }
    expect(handed.length).toBeGreaterThan(50)
    expect(fresh / (handed.length - 1)).toBeLessThanOrEqual(1.5)
    // The component calling the hook re-renders for the run's start and end, not per chunk.
    expect(hostRenders - rendersAtSend).toBeLessThan(20)
    await store.close()
    db.drop()
  })
})
