import { onScopeDispose, shallowRef, type ShallowRef } from 'vue'

// The open chat lives in the URL hash (#/c/<id>), as in the React demo: reload keeps it.
const PREFIX = '#/c/'
const current = (): string | null =>
  location.hash.startsWith(PREFIX) ? decodeURIComponent(location.hash.slice(PREFIX.length)) || null : null

/** Opens a chat (or the blank one): the hash changes, and every `useOpenSession` follows. */
export const openChat = (id: string | null): void =>
  void (location.hash = id ? `${PREFIX}${encodeURIComponent(id)}` : '')

export function useOpenSession(): { id: Readonly<ShallowRef<string | null>>; open(id: string | null): void } {
  const id = shallowRef(current())
  const onChange = (): void => void (id.value = current())
  window.addEventListener('hashchange', onChange)
  onScopeDispose(() => window.removeEventListener('hashchange', onChange))
  return { id, open: openChat }
}
