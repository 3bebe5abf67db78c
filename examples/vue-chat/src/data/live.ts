import type { LiveMessagesRequest, MessageItem, SessionEntry, SessionMeta, SessionTree, Store } from '@colloquy/core'
import { branchOf } from '@colloquy/core'
import type { Observable } from 'rxjs'
import { inject, shallowRef, toValue, watchEffect, type InjectionKey, type MaybeRefOrGetter, type Plugin, type ShallowRef } from 'vue'

// STAND-IN for @colloquy/vue, which is being written: the few composables this app uses, with
// the same names. When the package lands, this file becomes re-exports from it.

export type Live<T> =
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly data: T }
  | { readonly status: 'error'; readonly error: unknown }

const STORE: InjectionKey<Store> = Symbol('colloquy store')
/** `app.use(colloquy(store))`: every component below can use the composables. */
export const colloquy = (store: Store): Plugin => ({ install: (app) => void app.provide(STORE, store) })
export function useStore(): Store {
  const store = inject(STORE)
  if (!store) throw new Error('no store provided')
  return store
}

/** Subscribes while the calling component lives; a changed argument re-subscribes. */
function live<T>(open: () => Observable<T>): Readonly<ShallowRef<Live<T>>> {
  const state = shallowRef<Live<T>>({ status: 'loading' })
  watchEffect((onCleanup) => {
    const sub = open().subscribe({
      next: (data) => void (state.value = { status: 'ready', data }),
      error: (error: unknown) => void (state.value = { status: 'error', error }),
    })
    onCleanup(() => sub.unsubscribe())
  })
  return state
}

export const useSessions = (): Readonly<ShallowRef<Live<SessionMeta[]>>> => {
  const store = useStore()
  return live(() => store.sessions$({ order: 'updated_desc' }))
}
export const useSession = (id: MaybeRefOrGetter<string>): Readonly<ShallowRef<Live<SessionMeta | null>>> => {
  const store = useStore()
  return live(() => store.session$(toValue(id)))
}
export const useMessages = (request: MaybeRefOrGetter<LiveMessagesRequest>): Readonly<ShallowRef<Live<MessageItem[]>>> => {
  const store = useStore()
  return live(() => store.messages$(toValue(request)))
}
export const useEntry = (sid: MaybeRefOrGetter<string>, eid: MaybeRefOrGetter<string>): Readonly<ShallowRef<Live<SessionEntry | null>>> => {
  const store = useStore()
  return live(() => store.entry$(toValue(sid), toValue(eid)))
}

export interface Branch {
  index: number
  count: number
  prev(): Promise<void>
  next(): Promise<void>
}

/** "2 / 3" for an entry; moving lands on the newest leaf under the chosen sibling. */
export function useBranch(sid: MaybeRefOrGetter<string>, eid: MaybeRefOrGetter<string>): Readonly<ShallowRef<Live<Branch>>> {
  const store = useStore()
  const state = shallowRef<Live<Branch>>({ status: 'loading' })
  watchEffect((onCleanup) => {
    const session_id = toValue(sid)
    const entry_id = toValue(eid)
    // The actions read the newest tree when called, so one Branch object lasts until its position moves.
    let latest: SessionTree | null = null
    const show = async (i: number): Promise<void> => {
      const tree = latest
      const siblings = tree ? branchOf(tree, entry_id).siblings : []
      if (!tree || i < 0 || i >= siblings.length) return
      let leaf = siblings[i]
      for (let kids = tree.children.get(leaf); kids?.length; kids = tree.children.get(leaf)) {
        leaf = kids.reduce((a, b) => ((tree.entries.get(b)?.timestamp ?? 0) >= (tree.entries.get(a)?.timestamp ?? 0) ? b : a))
      }
      await store.setActiveLeaf({ session_id, entry_id: leaf })
    }
    const sub = store.tree$(session_id).subscribe((tree) => {
      latest = tree
      const { index, count } = tree ? branchOf(tree, entry_id) : { index: -1, count: 0 }
      const prev = state.value.status === 'ready' ? state.value.data : null
      if (prev && prev.index === index && prev.count === count) return
      state.value = { status: 'ready', data: { index, count, prev: () => show(index - 1), next: () => show(index + 1) } }
    })
    onCleanup(() => sub.unsubscribe())
  })
  return state
}
