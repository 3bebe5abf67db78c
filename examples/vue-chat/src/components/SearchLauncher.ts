import type { SearchHit } from '@colloquy/core/search'
import { useStore } from '@colloquy/vue'
import { isSearchKey } from 'chat-kit'
import { defineAsyncComponent, defineComponent, h, onBeforeUnmount, type PropType } from 'vue'
import { useChat } from '../data/chat.js'

// The palette and the search entry it imports are a chunk of their own, fetched on the first
// Ctrl/Cmd+K: the start bundle holds only this listener.
const SearchPalette = defineAsyncComponent(() => import('./SearchPalette.js').then((m) => m.SearchPalette))

/**
 * The search palette while `open`; Ctrl/Cmd+K opens and closes it (`onToggle`). A picked hit
 * opens its chat at its message, on the hit's branch.
 */
export const SearchLauncher = defineComponent({
  props: {
    open: Boolean,
    onToggle: { type: Function as PropType<(open: boolean) => void>, required: true },
    onOpenAt: {
      type: Function as PropType<(session_id: string, entry_id: string | null) => void>,
      required: true,
    },
  },
  setup(props) {
    const store = useStore()
    const { run } = useChat()
    const onKey = (e: KeyboardEvent): void => {
      if (!isSearchKey(e)) return
      e.preventDefault() // the browser's own Ctrl+K (search the web)
      props.onToggle(!props.open)
    }
    window.addEventListener('keydown', onKey)
    onBeforeUnmount(() => window.removeEventListener('keydown', onKey))

    const pick = async (hit: SearchHit): Promise<void> => {
      props.onToggle(false)
      // Off the active path: switch to the hit's branch first, so the chat opens on it.
      if (store.value && hit.entry_id && !hit.on_active_path)
        await run(store.value.selectBranch({ session_id: hit.session_id, entry_id: hit.entry_id }))
      props.onOpenAt(hit.session_id, hit.entry_id)
    }
    return () =>
      props.open &&
      h(SearchPalette, { onPick: (hit: SearchHit) => void pick(hit), onClose: () => props.onToggle(false) })
  },
})
