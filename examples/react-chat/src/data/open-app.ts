import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import { createChat, type Chat } from 'chat-kit'
import { lockAfterMinutes } from './encryption.js'

/** The demo's one database: every tab of the app opens it and sees the others' writes live. */
export const DATABASE = 'colloquy-demo'

export interface AppData {
  store: Store
  chat: Chat
}

/** With a passphrase, the store is encrypted (and a store written in clear is encrypted in place). */
export async function openApp(passphrase?: string): Promise<AppData> {
  const store = await createStore({
    storage: indexedDbStorage({ name: DATABASE }),
    ...(passphrase !== undefined && {
      encryption: { passphrase, ...(lockAfterMinutes() > 0 && { lockAfter: lockAfterMinutes() * 60_000 }) },
    }),
  })
  const chat = createChat(store)
  // A reply cut off by a closed tab would otherwise show "working" forever.
  void chat.recoverInterrupted().catch(() => {})
  return { store, chat }
}

/** The offline shell (production builds only: the dev server's modules are not precached). */
export function registerServiceWorker(): void {
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return
  window.addEventListener('load', () => {
    navigator.serviceWorker
      .register('/sw.js')
      .catch((e: unknown) => console.warn('service worker not registered', e))
  })
}
