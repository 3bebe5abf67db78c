import { useMessageIds } from '@colloquy/vue'
import { followNewest } from 'chat-kit'
import { defineComponent, h, onBeforeUnmount, onMounted, shallowRef, type PropType } from 'vue'
import { MessageRow } from './MessageRow.js'

/** A message to open the chat at (a search hit); `at` tells one pick from the next pick of the same message. */
export interface Target {
  entry_id: string
  at: number
}

export const Transcript = defineComponent({
  props: {
    sessionId: { type: String, required: true },
    busy: Boolean,
    /** Open at this message (a search hit), highlighted. */
    target: { type: Object as PropType<Target | null>, default: null },
  },
  setup(props) {
    // Ids only: they change on an append or a branch switch; each row reads its own entry, so a
    // streamed token re-renders one row.
    const ids = useMessageIds(() => ({ session_id: props.sessionId }))
    const scroller = shallowRef<HTMLElement | null>(null)
    const content = shallowRef<HTMLElement | null>(null)
    // The newest message stays in view while the reader is at the bottom (chat-kit's one rule).
    let stop = (): void => {}
    onMounted(() => {
      if (scroller.value && content.value) stop = followNewest(scroller.value, content.value)
    })
    onBeforeUnmount(() => stop())
    return () => {
      const list = ids.value.status === 'ready' ? ids.value.data : []
      return h('div', { class: 'transcript', ref: scroller }, [
        ids.value.status === 'ready' &&
          list.length === 0 &&
          h('div', { class: 'welcome' }, [
            h('h1', 'Say something'),
            h('p', { class: 'muted' }, 'Replies stream from the local model in this tab.'),
          ]),
        h(
          'ol',
          { class: 'messages', ref: content, 'aria-label': 'Messages', 'aria-busy': String(props.busy) },
          list.map((id, i) =>
            h(MessageRow, {
              key: id,
              sessionId: props.sessionId,
              entryId: id,
              live: props.busy && i === list.length - 1,
              busy: props.busy,
              last: i === list.length - 1,
              found: id === props.target?.entry_id ? props.target.at : undefined,
            }),
          ),
        ),
      ])
    }
  },
})
