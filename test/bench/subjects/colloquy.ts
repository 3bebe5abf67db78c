import { createStore, indexedDbStorage, type Store } from '@colloquy/core'

/** Colloquy as an app would open it: IndexedDB storage (relaxed durability), multi-tab relay on. */
export const openColloquy = (name: string): Promise<Store> =>
  createStore({ storage: indexedDbStorage({ name }) })
