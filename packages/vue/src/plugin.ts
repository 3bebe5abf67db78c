import type { Store } from '@colloquy/core'
import {
  computed,
  inject,
  provide,
  toRaw,
  toValue,
  type InjectionKey,
  type MaybeRefOrGetter,
  type Plugin,
  type Ref,
} from 'vue'
import type { SyncLike } from '@colloquy/kit'

export interface ColloquyOptions {
  /**
   * The store, or a ref / getter of it: `null` while it opens, and on the server, and every
   * composable reports loading. (A store put in `ref()` is unwrapped from its proxy.)
   */
  store?: MaybeRefOrGetter<Store | null | undefined>
  /** A sync client (anything with `status$`), for `useSyncStatus`. */
  sync?: MaybeRefOrGetter<SyncLike | null | undefined>
}

interface Colloquy {
  readonly store: Readonly<Ref<Store | null>>
  readonly sync: Readonly<Ref<SyncLike | null>>
}

const colloquyKey: InjectionKey<Colloquy> = Symbol('colloquy')

// The store is a plain object with live internals: never hand composables a reactive proxy of it.
const contextOf = (options: ColloquyOptions): Colloquy => ({
  store: computed(() => toRaw(toValue(options.store)) ?? null),
  sync: computed(() => toRaw(toValue(options.sync)) ?? null),
})

/** `app.use(createColloquy({ store, sync }))`: every component of the app can use the composables. */
export function createColloquy(options: ColloquyOptions): Plugin {
  return { install: (app) => void app.provide(colloquyKey, contextOf(options)) }
}

/** The same for one subtree: call in a component's `setup`. */
export function provideColloquy(options: ColloquyOptions): void {
  provide(colloquyKey, contextOf(options))
}

export function useColloquy(): Colloquy {
  const value = inject(colloquyKey, null)
  if (!value)
    throw new Error('@colloquy/vue: no store provided (app.use(createColloquy(…)) or provideColloquy(…))')
  return value
}

/** The provided store, as a read-only ref (`null` while there is none). */
export function useStore(): Readonly<Ref<Store | null>> {
  return useColloquy().store
}
