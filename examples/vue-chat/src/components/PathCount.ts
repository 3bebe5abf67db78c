import { useMessageIds } from '@colloquy/vue'
import { defineComponent, h } from 'vue'

/** How many messages a chat shows: its active path, not every branch. */
export const PathCount = defineComponent({
  props: { sessionId: { type: String, required: true } },
  setup(props) {
    const ids = useMessageIds(() => ({ session_id: props.sessionId }))
    return () => {
      if (ids.value.status !== 'ready') return null
      const n = ids.value.data.length
      return h('span', { class: 'count' }, `${n} ${n === 1 ? 'message' : 'messages'}`)
    }
  },
})
