import type { Exporter } from 'chat-kit'
import { useStore } from '@colloquy/vue'
import { exportChat, exportFormats } from 'chat-kit'
import { defineComponent, h, nextTick, onBeforeUnmount, shallowRef } from 'vue'
import { useChat } from '../data/chat.js'

/** "Export" in the top bar: one item per format `@colloquy/formats` writes (chat-kit's list). */
export const ExportMenu = defineComponent({
  props: { sessionId: { type: String, required: true } },
  setup(props) {
    const store = useStore()
    const { run } = useChat()
    const formats = shallowRef<readonly Exporter[] | null>(null)
    const root = shallowRef<HTMLElement | null>(null)
    const close = (): void => void (formats.value = null)
    const outside = (e: PointerEvent): void => {
      if (!(e.target instanceof Node) || !root.value?.contains(e.target)) close()
    }
    document.addEventListener('pointerdown', outside)
    onBeforeUnmount(() => document.removeEventListener('pointerdown', outside))
    const toggle = async (): Promise<void> => {
      if (formats.value) return close()
      formats.value = (await run(exportFormats())) ?? null
      await nextTick()
      root.value?.querySelector<HTMLElement>('[role="menuitem"]')?.focus()
    }
    const pick = (f: Exporter): void => {
      close()
      if (store.value) void run(exportChat(store.value, props.sessionId, f))
    }
    return () =>
      h(
        'div',
        { class: 'export', ref: root, onKeydown: (e: KeyboardEvent) => e.key === 'Escape' && close() },
        [
          h(
            'button',
            {
              type: 'button',
              class: 'export-toggle',
              'aria-label': 'Export chat',
              'aria-haspopup': 'menu',
              'aria-expanded': String(formats.value !== null),
              onClick: () => void toggle(),
            },
            'Export',
          ),
          formats.value &&
            h(
              'div',
              { class: 'row-menu', role: 'menu', 'aria-label': 'Export chat' },
              formats.value.map((f) =>
                h(
                  'button',
                  {
                    key: f.id,
                    type: 'button',
                    role: 'menuitem',
                    'data-format': f.id,
                    onClick: () => pick(f),
                  },
                  `Export as ${f.label}`,
                ),
              ),
            ),
        ],
      )
  },
})
