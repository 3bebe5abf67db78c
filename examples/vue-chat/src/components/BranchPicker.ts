import { useBranch } from '@colloquy/vue'
import { defineComponent, h } from 'vue'
import { useChat } from '../data/chat.js'

/** "‹ 2 / 3 ›" under a message with siblings; nothing when it has none. */
export const BranchPicker = defineComponent({
  props: {
    sessionId: { type: String, required: true },
    entryId: { type: String, required: true },
    disabled: Boolean,
  },
  setup(props) {
    const branch = useBranch(
      () => props.sessionId,
      () => props.entryId,
    )
    const { run } = useChat()
    return () => {
      const b = branch.value
      if (b.status !== 'ready' || b.data.count < 2) return null
      const { index, count, prev, next } = b.data
      return h(
        'span',
        { class: 'branch-picker', role: 'group', 'aria-label': `Version ${index + 1} of ${count}` },
        [
          h(
            'button',
            {
              type: 'button',
              'aria-label': 'Previous version',
              disabled: props.disabled || index === 0,
              onClick: () => void run(prev()),
            },
            '‹',
          ),
          h('span', { class: 'branch-count' }, `${index + 1} / ${count}`),
          h(
            'button',
            {
              type: 'button',
              'aria-label': 'Next version',
              disabled: props.disabled || index === count - 1,
              onClick: () => void run(next()),
            },
            '›',
          ),
        ],
      )
    }
  },
})
