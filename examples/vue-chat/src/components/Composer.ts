import { defineComponent, h, shallowRef } from 'vue'

/** Enter sends, Shift+Enter breaks the line; while a reply streams, the button stops it. */
export const Composer = defineComponent({
  props: { busy: Boolean },
  emits: { send: (text: string) => typeof text === 'string', stop: () => true },
  setup(props, { emit }) {
    const text = shallowRef('')
    const send = (): void => {
      if (props.busy || !text.value.trim()) return
      emit('send', text.value)
      text.value = ''
    }
    return () => h('form', { class: 'composer', onSubmit: (e: Event) => (e.preventDefault(), send()) }, [
      h('textarea', {
        'aria-label': 'Message', placeholder: 'Message the local model…', rows: 1, value: text.value,
        onInput: (e: Event) => void (text.value = (e.target as HTMLTextAreaElement).value),
        onKeydown: (e: KeyboardEvent) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault()
            send()
          }
        },
      }),
      props.busy
        ? h('button', { type: 'button', class: 'send stop', 'aria-label': 'Stop reply', onClick: () => emit('stop') }, '■')
        : h('button', { type: 'submit', class: 'send', 'aria-label': 'Send message', disabled: !text.value.trim() }, '➤'),
    ])
  },
})
