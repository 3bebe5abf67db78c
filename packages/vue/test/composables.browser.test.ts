import type { Store } from '@colloquy/core'
import { mount } from '@vue/test-utils'
import { defineComponent, effectScope, h, isReadonly, nextTick, ref, shallowRef } from 'vue'
import { describe, expect, it } from 'vitest'
import {
  createColloquy,
  LOADING,
  provideColloquy,
  useEntry,
  useMessageIds,
  useMessages,
  useObservable,
  useSession,
  useSessions,
  useStore,
  useSyncStatus,
  type SyncStatus,
} from '../src/index.js'
import {
  assistant,
  countSubscriptions,
  memoryStore,
  seedSession,
  subject,
  textOf,
  user,
} from '../../../test/support/fixtures.js'
import { withSetup } from './with-setup.js'

describe('store composables', () => {
  it('useSessions follows creates, meta changes and deletes', async () => {
    const store = await memoryStore()
    const a = await store.create({ title: 'first' })
    const { result } = withSetup(() => useSessions({ order: 'created_asc' }), store)
    expect(result.value.data?.map((m) => m.title)).toEqual(['first'])
    const b = await store.create({ title: 'second' })
    expect(result.value.data?.map((m) => m.title)).toEqual(['first', 'second'])
    await store.setMeta({ session_id: a.session_id, title: 'renamed' })
    await store.delete({ session_id: b.session_id })
    expect(result.value.data?.map((m) => m.title)).toEqual(['renamed'])
  })

  it('useSession is null for a missing session and follows one that exists', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({ title: 'x' })
    const { result } = withSetup(
      () => ({ missing: useSession('s_nope'), found: useSession(session_id) }),
      store,
    )
    expect(result.missing.value).toMatchObject({ status: 'ready', data: null })
    expect(result.found.value.data?.title).toBe('x')
    await store.setStatus({ session_id, status: 'working' })
    expect(result.found.value.data?.status).toBe('working')
  })

  it('useMessages follows appends and streamed content, keeping unchanged items', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const { result } = withSetup(() => useMessages({ session_id }), store)
    expect(result.value).toMatchObject({ status: 'ready', data: [] })
    await store.append({ session_id, message: user('hi') })
    const { entry_id } = await store.append({ session_id, message: assistant('') })
    const first = result.value.data![0]
    await store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'Hello' }] })
    expect(result.value.data![1].message?.content).toEqual([{ type: 'text', text: 'Hello' }])
    expect(result.value.data![0]).toBe(first)
  })

  it('useMessageIds keeps its array while content streams and changes it on append', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 2)
    const { result } = withSetup(() => useMessageIds({ session_id }), store)
    const before = result.value
    await store.updateMessage({ session_id, entry_id: ids[1], content: [{ type: 'text', text: 'more' }] })
    expect(result.value).toBe(before)
    const { entry_id } = await store.append({ session_id, message: user('next') })
    expect(result.value.data).toEqual([...ids, entry_id])
  })

  it('useEntry follows one entry, is null for an unknown one and after a delete', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 2)
    const { result } = withSetup(
      () => ({ entry: useEntry(session_id, ids[1]), unknown: useEntry(session_id, 'e_nope') }),
      store,
    )
    expect(textOf(result.entry.value.data)).toBe('a1')
    expect(result.unknown.value).toMatchObject({ status: 'ready', data: null })
    await store.updateMessage({ session_id, entry_id: ids[1], content: [{ type: 'text', text: 'edited' }] })
    expect(textOf(result.entry.value.data)).toBe('edited')
    await store.delete({ session_id })
    expect(result.entry.value).toMatchObject({ status: 'ready', data: null })
  })

  it('returns read-only refs', async () => {
    const store = await memoryStore()
    const { result } = withSetup(() => useSessions(), store)
    expect(isReadonly(result)).toBe(true)
  })
})

describe('arguments', () => {
  it('accepts refs and getters and re-subscribes when their value changes', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 4)
    const entry = ref(ids[0])
    const roles = ref<Array<'user' | 'assistant'>>(['user'])
    const { result } = withSetup(
      () => ({
        entry: useEntry(session_id, entry),
        ids: useMessageIds(() => ({ session_id, roles: roles.value })),
      }),
      store,
    )
    expect(textOf(result.entry.value.data)).toBe('q0')
    expect(result.ids.value.data).toEqual([ids[0], ids[2]])
    entry.value = ids[3]
    roles.value = ['assistant']
    expect(textOf(result.entry.value.data)).toBe('a3')
    expect(result.ids.value.data).toEqual([ids[1], ids[3]])
  })

  it('a getter yielding an equal object literal does not re-subscribe', async () => {
    const store = await memoryStore()
    const { session_id } = await seedSession(store, 4)
    const subs = countSubscriptions(store)
    const tick = ref(0)
    const { result } = withSetup(
      () => useMessages(() => (tick.value, { session_id, roles: ['user', 'assistant'] })),
      store,
    )
    const opened = subs.opened()
    const state = result.value
    for (let i = 0; i < 10; i++) tick.value++
    expect(subs.opened()).toBe(opened)
    expect(result.value).toBe(state)
  })
})

describe('scopes', () => {
  it('unmounting closes every subscription', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 4)
    const subs = countSubscriptions(store)
    const { wrapper } = withSetup(
      () => [
        useSessions(),
        useSession(session_id),
        useMessages({ session_id }),
        useMessageIds({ session_id }),
        useEntry(session_id, ids[0]),
      ],
      store,
    )
    expect(subs.open()).toBeGreaterThan(0)
    wrapper.unmount()
    expect(subs.open()).toBe(0)
  })

  it('works in a bare effect scope (provide through the plugin is not needed to stop)', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({ title: 'scoped' })
    const subs = countSubscriptions(store)
    let title: string | undefined
    const Host = defineComponent({
      setup() {
        provideColloquy({ store })
        return () => h(Child)
      },
    })
    const Child = defineComponent({
      setup() {
        const scope = effectScope()
        const s = scope.run(() => useSession(session_id))!
        title = s.value.data?.title
        scope.stop()
        return () => h('p')
      },
    })
    mount(Host)
    expect(title).toBe('scoped')
    expect(subs.open()).toBe(0)
  })
})

describe('plugin', () => {
  it('reports loading while there is no store, then goes live when one arrives', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({ title: 'later' })
    const current = shallowRef<Store | null>(null)
    const { result } = withSetup(
      () => ({ session: useSession(session_id), sessions: useSessions(), store: useStore() }),
      { store: current },
    )
    expect(result.session.value).toBe(LOADING)
    expect(result.sessions.value).toBe(LOADING)
    expect(result.store.value).toBeNull()
    current.value = store
    expect(result.store.value).toBe(store)
    expect(result.session.value.data?.title).toBe('later')
  })

  it('unwraps a store put in ref()', async () => {
    const store = await memoryStore()
    await store.create({ title: 'raw' })
    const { result } = withSetup(() => ({ sessions: useSessions(), store: useStore() }), {
      store: ref(store) as never,
    })
    expect(result.store.value).toBe(store)
    expect(result.sessions.value.data?.[0].title).toBe('raw')
  })

  it('throws a clear error without a provided store', () => {
    const Host = defineComponent({
      setup() {
        useSessions()
        return () => h('p')
      },
    })
    expect(() => mount(Host, { global: { config: { warnHandler: () => {} } } })).toThrow(/no store provided/)
  })
})

describe('useSyncStatus', () => {
  it('is null without a sync client', async () => {
    const { result } = withSetup(() => useSyncStatus(), await memoryStore())
    expect(result.value).toMatchObject({ status: 'ready', data: null })
  })

  it('follows status$, reports its error, and unsubscribes on unmount', async () => {
    const status$ = subject<SyncStatus>()
    const { result, wrapper } = withSetup(() => useSyncStatus(), {
      store: await memoryStore(),
      sync: { status$ },
    })
    expect(result.value).toBe(LOADING)
    status$.next({ state: 'syncing', pending: 2 })
    expect(result.value.data).toEqual({ state: 'syncing', pending: 2 })
    status$.fail(new Error('socket closed'))
    expect(result.value.status).toBe('error')
    wrapper.unmount()
    expect(status$.observers).toBe(0)
  })
})

describe('useObservable', () => {
  it('returns initial, then each value, shared by scopes passing the same observable', () => {
    const source = subject<number>()
    const { result } = withSetup(() => [useObservable(source, -1), useObservable(() => source, -1)], null)
    expect(result.map((r) => r.value)).toEqual([-1, -1])
    expect(source.observers).toBe(1)
    source.next(7)
    expect(result.map((r) => r.value)).toEqual([7, 7])
  })

  it("hands an error to Vue's error handling", async () => {
    const source = subject<number>()
    const errors: unknown[] = []
    const Host = defineComponent({
      setup() {
        const v = useObservable(source, 0)
        return () => h('p', String(v.value))
      },
    })
    mount(Host, {
      global: {
        plugins: [createColloquy({ store: null })],
        config: { errorHandler: (e) => void errors.push(e) },
      },
    })
    source.fail(new Error('boom'))
    await nextTick()
    expect(String(errors[0])).toContain('boom')
  })
})
