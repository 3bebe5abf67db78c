import type { AttachmentMeta } from '@colloquy/core'
import { useAttachmentUrl, useDraft, useStore } from '@colloquy/vue'
import { computed, defineComponent, h, shallowRef, type PropType } from 'vue'

/** An SVG paperclip (an emoji would depend on the system's fonts). */
const paperclip = () =>
  h(
    'svg',
    {
      width: 16,
      height: 16,
      viewBox: '0 0 24 24',
      fill: 'none',
      stroke: 'currentColor',
      'stroke-width': 2,
      'stroke-linecap': 'round',
      'stroke-linejoin': 'round',
      'aria-hidden': 'true',
    },
    [
      h('path', {
        d: 'M21.4 11.1l-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5',
      }),
    ],
  )

/** A chip: a thumbnail for an image (its bytes read on demand), a name for anything else. */
const Chip = defineComponent({
  props: { attachment: { type: Object as PropType<AttachmentMeta>, required: true } },
  emits: { remove: () => true },
  setup(props, { emit }) {
    const image = computed(() => /^image\//.test(props.attachment.mime))
    const url = useAttachmentUrl(
      () => (image.value ? props.attachment.session_id : null),
      () => (image.value ? props.attachment.attachment_id : null),
    )
    return () =>
      h('li', { class: 'chip', 'data-attachment': props.attachment.attachment_id }, [
        image.value && url.value ? h('img', { src: url.value, alt: '' }) : null,
        h('span', { class: 'chip-name' }, props.attachment.name),
        h(
          'button',
          {
            type: 'button',
            class: 'chip-remove',
            'aria-label': `Remove ${props.attachment.name}`,
            onClick: () => emit('remove'),
          },
          '×',
        ),
      ])
  },
})

/**
 * Enter sends, Shift+Enter breaks the line; while a reply streams, the button stops it. Files
 * pasted, dropped on it or picked become chips; text and chips are the open chat's draft.
 */
export const Composer = defineComponent({
  props: {
    busy: Boolean,
    /** The open chat ('' when none): its draft is kept across reloads and tabs. */
    sessionId: { type: String, default: '' },
    /** Opens a chat for files attached with none open; resolves with its id. */
    ensureSession: { type: Function as PropType<() => Promise<string | null>>, required: true },
  },
  emits: {
    send: (text: string, attachments: readonly AttachmentMeta[]) =>
      typeof text === 'string' && Array.isArray(attachments),
    stop: () => true,
    error: (message: string) => typeof message === 'string',
  },
  setup(props, { emit }) {
    const store = useStore()
    const draft = useDraft(() => props.sessionId)
    const local = shallowRef('')
    const picker = shallowRef<HTMLInputElement | null>(null)
    const text = computed({
      get: () => (props.sessionId ? draft.text.value : local.value),
      set: (v: string) => void (props.sessionId ? (draft.text.value = v) : (local.value = v)),
    })
    const chips = computed(() => (props.sessionId ? draft.attachments.value : []))
    const canSend = (): boolean => !props.busy && (text.value.trim() !== '' || chips.value.length > 0)
    const send = (): void => {
      if (!canSend()) return
      emit('send', text.value, chips.value)
      if (props.sessionId) void draft.clear()
      else local.value = ''
    }
    const attach = async (files: readonly File[]): Promise<void> => {
      const s = store.value
      if (!s || files.length === 0) return
      const id = props.sessionId || (await props.ensureSession())
      if (!id) return
      try {
        const added: string[] = []
        for (const file of files)
          added.push(
            (await s.putAttachment({ session_id: id, file, name: file.name || undefined })).attachment
              .attachment_id,
          )
        const ids = [...chips.value.map((c) => c.attachment_id), ...added]
        if (id === props.sessionId) await draft.setAttachments(ids)
        else await s.setDraft({ session_id: id, draft: local.value, attachment_ids: ids })
      } catch (e) {
        emit('error', e instanceof Error ? e.message : String(e))
      }
    }
    const remove = async (a: AttachmentMeta): Promise<void> => {
      await draft.setAttachments(
        chips.value.filter((c) => c.attachment_id !== a.attachment_id).map((c) => c.attachment_id),
      )
      // Unsent chips are nobody else's: free their bytes.
      await store.value
        ?.deleteAttachment({ session_id: a.session_id, attachment_id: a.attachment_id })
        .catch(() => {})
    }
    return () =>
      h(
        'form',
        {
          class: 'composer',
          onSubmit: (e: Event) => (e.preventDefault(), send()),
          onDragover: (e: DragEvent) => e.preventDefault(),
          onDrop: (e: DragEvent) => {
            if (!e.dataTransfer?.types.includes('Files')) return
            e.preventDefault()
            e.stopPropagation()
            void attach([...e.dataTransfer.files])
          },
        },
        [
          chips.value.length
            ? h(
                'ul',
                { class: 'chips', 'aria-label': 'Attachments' },
                chips.value.map((a) =>
                  h(Chip, { key: a.attachment_id, attachment: a, onRemove: () => void remove(a) }),
                ),
              )
            : null,
          h('div', { class: 'composer-row' }, [
            h(
              'button',
              {
                type: 'button',
                class: 'attach',
                'aria-label': 'Attach files',
                title: 'Attach files',
                onClick: () => picker.value?.click(),
              },
              [paperclip()],
            ),
            h('input', {
              ref: picker,
              type: 'file',
              multiple: true,
              hidden: true,
              'aria-hidden': 'true',
              tabindex: -1,
              onChange: (e: Event) => {
                const input = e.target as HTMLInputElement
                void attach([...(input.files ?? [])])
                input.value = ''
              },
            }),
            h('textarea', {
              'aria-label': 'Message',
              placeholder: 'Message the local model…',
              rows: 1,
              value: text.value,
              onInput: (e: Event) => void (text.value = (e.target as HTMLTextAreaElement).value),
              onPaste: (e: ClipboardEvent) => {
                const files = [...(e.clipboardData?.files ?? [])]
                if (!files.length) return
                e.preventDefault()
                void attach(files)
              },
              onKeydown: (e: KeyboardEvent) => {
                if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                  e.preventDefault()
                  send()
                }
              },
            }),
            props.busy
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'send stop',
                    'aria-label': 'Stop reply',
                    onClick: () => emit('stop'),
                  },
                  '■',
                )
              : h(
                  'button',
                  { type: 'submit', class: 'send', 'aria-label': 'Send message', disabled: !canSend() },
                  '➤',
                ),
          ]),
        ],
      )
  },
})
