/**
 * Ctrl/Cmd+K (no Alt, no Shift): opens and closes the search palette in both demos. Here and not
 * in `chat-kit/search`, because the listener is in the start bundle and the palette is not.
 */
export const isSearchKey = (e: KeyboardEvent): boolean =>
  (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k'
