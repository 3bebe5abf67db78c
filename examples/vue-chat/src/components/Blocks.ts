import type { ContentBlock, FunctionCallBlock, FunctionResultBlock } from '@colloquy/core'
import { useAttachmentUrl } from '@colloquy/vue'
import { defineComponent, h, type VNode } from 'vue'

// Every string is a text child of h(): message content is data, never markup (no innerHTML).

const isImage = (mime: string): boolean => /^image\/(png|jpe?g|gif|webp|svg\+xml|avif)$/.test(mime)

/** An image whose bytes are in the attachment store, read as an object URL while it is shown. */
const StoredImage = defineComponent({
  props: { sessionId: { type: String, required: true }, attachmentId: { type: String, required: true } },
  setup(props) {
    const url = useAttachmentUrl(
      () => props.sessionId,
      () => props.attachmentId,
    )
    return () =>
      h('figure', { class: 'image', 'data-block': 'image', 'data-attachment': props.attachmentId }, [
        url.value
          ? h('img', { src: url.value, alt: 'Image in the message' })
          : h('span', { class: 'image-placeholder' }, url.value === null ? 'Image not available' : 'Image'),
      ])
  },
})

function toolCard(
  call: FunctionCallBlock,
  result: FunctionResultBlock | undefined,
  live: boolean,
  sessionId?: string,
): VNode {
  return h('div', { class: ['tool', result?.is_error && 'tool-error'], 'data-block': 'function_call' }, [
    h('div', { class: 'tool-head' }, [
      h('code', call.function_id),
      h(
        'span',
        { class: 'tool-state' },
        result ? (result.is_error ? 'failed' : 'done') : live ? 'running…' : 'no result',
      ),
    ]),
    h('div', { class: 'tool-section' }, [
      h('span', { class: 'tool-label' }, 'Arguments'),
      h('pre', JSON.stringify(call.arguments, null, 2)),
    ]),
    result &&
      h('div', { class: 'tool-section', 'data-block': 'function_result' }, [
        h('span', { class: 'tool-label' }, 'Result'),
        h('div', { class: 'tool-result' }, blocks(result.content, false, sessionId)),
      ]),
  ])
}

/** The content of a message; the last block of a streaming reply shows a caret. */
export function blocks(content: readonly ContentBlock[], live: boolean, sessionId?: string): VNode[] {
  const results = new Map<string, FunctionResultBlock>()
  for (const b of content) if (b.type === 'function_result') results.set(b.function_call_id, b)
  const calls = new Set(content.flatMap((b) => (b.type === 'function_call' ? [b.id] : [])))
  return content.flatMap((b, i): VNode[] => {
    const last = live && i === content.length - 1
    switch (b.type) {
      case 'text':
        return [h('p', { key: i, class: ['text', last && 'streaming'], 'data-block': 'text' }, b.text)]
      case 'thinking':
        return [
          h('details', { key: i, class: 'thinking', open: last }, [
            h('summary', last ? 'Thinking…' : 'Thought process'),
            h('p', { class: 'text' }, b.text),
          ]),
        ]
      case 'function_call':
        return [toolCard(b, results.get(b.id), live, sessionId)]
      case 'function_result':
        return calls.has(b.function_call_id)
          ? []
          : [
              h(
                'div',
                { class: 'tool', 'data-block': 'function_result' },
                blocks(b.content, false, sessionId),
              ),
            ]
      case 'image':
        if (!isImage(b.mime)) return [h('span', { class: 'file' }, `Image (${b.mime}) not shown`)]
        if (b.data !== '')
          return [
            h('figure', { key: i, class: 'image', 'data-block': 'image' }, [
              h('img', { src: `data:${b.mime};base64,${b.data}`, alt: 'Image in the message' }),
            ]),
          ]
        return b.attachment_id !== undefined && sessionId
          ? [h(StoredImage, { key: i, sessionId, attachmentId: b.attachment_id })]
          : [h('span', { class: 'file' }, `Image (${b.mime}) not shown`)]
      case 'file':
        return [h('span', { key: i, class: 'file', 'data-block': 'file' }, `${b.name} · ${b.mime}`)]
    }
  })
}
