import { computed, defineComponent, h, nextTick, shallowRef, watch } from 'vue'
import { useMessages } from '../data/live.js'
import { MessageRow } from './MessageRow.js'

export const Transcript = defineComponent({
  props: { sessionId: { type: String, required: true }, busy: Boolean },
  setup(props) {
    const items = useMessages(() => ({ session_id: props.sessionId }))
    const ids = computed(() => (items.value.status === 'ready' ? items.value.data.map((i) => i.entry_id) : []))
    const scroller = shallowRef<HTMLElement | null>(null)
    // Follow the reply as it streams in.
    watch(items, () => void nextTick(() => {
      const el = scroller.value
      if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 120) el.scrollTop = el.scrollHeight
    }))
    return () => {
      const list = ids.value
      return h('div', { class: 'transcript', ref: scroller }, [
        items.value.status === 'ready' && list.length === 0 && h('div', { class: 'welcome' }, [h('h1', 'Say something'), h('p', { class: 'muted' }, 'Replies stream from the local model in this tab.')]),
        h('ol', { class: 'messages', 'aria-label': 'Messages', 'aria-busy': String(props.busy) },
          list.map((id, i) => h(MessageRow, { key: id, sessionId: props.sessionId, entryId: id, live: props.busy && i === list.length - 1, busy: props.busy }))),
      ])
    }
  },
})
