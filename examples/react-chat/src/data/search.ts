import type { Store } from '@colloquy/core'
import { enableSearch, type Search } from '@colloquy/core/search'

// Imported only by the palette, which loads on the first Ctrl/Cmd+K: an app session that never
// searches neither downloads the search entry nor builds an index.

const handles = new WeakMap<Store, Promise<Search>>()

/**
 * The store's one search handle, enabled on first use and kept for the page's life: closing
 * the palette keeps the index following the store, so opening it again answers at once. A
 * failed enable is forgotten, so the next opening tries again.
 */
export function searchOf(store: Store): Promise<Search> {
  let handle = handles.get(store)
  if (!handle) {
    handle = enableSearch(store)
    handles.set(store, handle)
    handle.catch(() => handles.delete(store))
    // A lock ends an encrypted store's search (its index is dropped): the next use after the
    // unlock enables it again.
    const sub = store.locked$.subscribe((locked) => {
      if (!locked) return
      handles.delete(store)
      queueMicrotask(() => sub.unsubscribe())
    })
  }
  return handle
}

/** Closes the store's search handle, if any (its database is to be deleted: "Encrypt my chats"). */
export async function closeSearchOf(store: Store): Promise<void> {
  const handle = handles.get(store)
  handles.delete(store)
  ;(await handle?.catch(() => undefined))?.close()
}
