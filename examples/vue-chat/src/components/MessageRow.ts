import type { MessageEntry } from '@colloquy/core'
import { useEntry } from '@colloquy/vue'
import { messageText, replyEnd } from 'chat-kit'
import { defineComponent, h, nextTick, shallowRef, watch } from 'vue'
import { useChat } from '../data/chat.js'
import { openChat } from '../data/route.js'
import { blocks } from './Blocks.js'
import { BranchPicker } from './BranchPicker.js'
import { LastReplyEnd } from './LastReplyEnd.js'
import { replyEndMark } from './status.js'

/** One message; it reads its own entry, so a streamed token re-renders this row only. */
export const MessageRow = defineComponent({
  props: {
    sessionId: { type: String, required: true },
    entryId: { type: String, required: true },
    live: Boolean,
    busy: Boolean,
    /** The newest message on the chat's path: the session's status tells how it ended. */
    last: Boolean,
    /** A search opened the chat at this message (when it was picked): shown and highlighted. */
    found: { type: Number, default: undefined },
  },
  setup(props) {
    const entry = useEntry(
      () => props.sessionId,
      () => props.entryId,
    )
    const { chat, run } = useChat()
    const draft = shallowRef<string | null>(null)
    // The row renders once its entry is read: it scrolls itself into view then, and again when
    // the same message is picked again (a new `found`).
    const row = shallowRef<HTMLElement | null>(null)
    watch(
      () => [props.found, entry.value.status === 'ready'] as const,
      ([found, shown]) => {
        if (found !== undefined && shown) void nextTick(() => row.value?.scrollIntoView({ block: 'center' }))
      },
      { immediate: true },
    )

    const editor = (): ReturnType<typeof h> =>
      h(
        'form',
        {
          class: 'editor',
          onSubmit: (e: Event) => {
            e.preventDefault()
            const text = draft.value ?? ''
            draft.value = null
            void run(chat.edit(props.sessionId, props.entryId, text))
          },
        },
        [
          h('textarea', {
            'aria-label': 'Edit message',
            value: draft.value,
            onInput: (e: Event) => void (draft.value = (e.target as HTMLTextAreaElement).value),
          }),
          h('div', { class: 'editor-buttons' }, [
            h('button', { type: 'button', onClick: () => void (draft.value = null) }, 'Cancel'),
            h('button', { type: 'submit', class: 'primary', disabled: !draft.value?.trim() }, 'Save & send'),
          ]),
        ],
      )

    return () => {
      const e = entry.value
      if (e.status !== 'ready' || e.data?.kind !== 'message') return null
      const { message, parent_id } = e.data as MessageEntry
      const role = message.role
      const action = (label: string, onClick: () => void, disabled = props.busy) =>
        h(
          'button',
          { type: 'button', class: 'action', 'aria-label': label, title: label, disabled, onClick },
          label.split(' ')[0],
        )
      const actions = [
        role === 'user' &&
          parent_id !== null &&
          action('Edit message', () => void (draft.value = messageText(message))),
        role === 'assistant' &&
          action('Regenerate reply', () => void run(chat.regenerate(props.sessionId, props.entryId))),
        action(
          'Fork from here',
          () => void run(chat.fork(props.sessionId, props.entryId)).then((id) => id && openChat(id)),
          props.live,
        ),
      ]
      const end =
        role !== 'assistant' || props.live
          ? null
          : props.last
            ? h(LastReplyEnd, { sessionId: props.sessionId, message })
            : replyEndMark(replyEnd(message, null, false))
      const body =
        draft.value !== null
          ? editor()
          : role === 'assistant' && message.content.length === 0
            ? h('span', { class: 'typing', 'aria-label': 'Writing' }, [h('i'), h('i'), h('i')])
            : blocks(message.content, props.live, props.sessionId)
      return h(
        'li',
        {
          ref: row,
          class: ['message', `message-${role}`, props.found !== undefined && 'message-found'],
          'aria-current': props.found !== undefined ? 'true' : undefined,
          'data-role': role,
          'data-entry-id': props.entryId,
          'aria-busy': String(props.live),
        },
        [
          role === 'assistant' &&
            h('img', { class: 'avatar', src: '/icon.svg', alt: '', width: 28, height: 28 }),
          h('div', { class: 'message-main' }, [
            h('div', { class: 'bubble' }, body),
            draft.value === null &&
              h('div', { class: 'message-foot' }, [
                end,
                h(BranchPicker, { sessionId: props.sessionId, entryId: props.entryId, disabled: props.busy }),
                h('span', { class: 'actions' }, actions),
              ]),
          ]),
        ],
      )
    }
  },
})
