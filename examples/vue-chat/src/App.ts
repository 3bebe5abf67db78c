import type { AttachmentMeta } from '@colloquy/core'
import { useSession } from '@colloquy/vue'
import { displayTitle } from 'chat-kit'
import { defineComponent, h, shallowRef } from 'vue'
import { Composer } from './components/Composer.js'
import { SearchLauncher } from './components/SearchLauncher.js'
import { Sidebar } from './components/Sidebar.js'
import { ExportMenu } from './components/ExportMenu.js'
import { statusDot } from './components/status.js'
import { Transcript, type Target } from './components/Transcript.js'
import { useChat } from './data/chat.js'
import { useOpenSession } from './data/route.js'

export const App = defineComponent({
  setup() {
    const { chat, run, notice } = useChat()
    const { id, open } = useOpenSession()
    const session = useSession(() => id.value ?? '')
    const searching = shallowRef(false)
    // The message a search hit opened its chat at (highlighted while that chat is open).
    const found = shallowRef<(Target & { session_id: string }) | null>(null)
    const openAt = (session_id: string, entry_id: string | null): void => {
      open(session_id)
      found.value = entry_id ? { session_id, entry_id, at: performance.now() } : null
    }
    const meta = () => (id.value && session.value.status === 'ready' ? session.value.data : null)

    // Sending (or attaching a file) with no chat open starts one.
    const ensure = async (): Promise<string | null> => {
      const sid = id.value ?? (await run(chat.create())) ?? null
      if (sid) open(sid)
      return sid
    }
    const send = async (text: string, attachments: readonly AttachmentMeta[] = []): Promise<void> => {
      const sid = await ensure()
      if (sid) await run(chat.send(sid, text, attachments))
    }
    return () => {
      const m = meta()
      const busy = m?.status === 'working'
      return h('div', { class: 'app' }, [
        h(Sidebar, { openId: id.value ?? '', onOpen: open, onSearch: () => void (searching.value = true) }),
        h('main', { class: 'main' }, [
          h('header', { class: 'topbar' }, [
            h('div', { class: 'topbar-title' }, [
              h('h1', m ? displayTitle(m.title) : 'Colloquy'),
              m && h('span', { class: 'topbar-sub' }, [statusDot(m)]),
            ]),
            m && h(ExportMenu, { key: m.session_id, sessionId: m.session_id }),
          ]),
          id.value
            ? h(Transcript, {
                key: id.value,
                sessionId: id.value,
                busy,
                target: found.value?.session_id === id.value ? found.value : null,
              })
            : h('div', { class: 'transcript' }, [
                h('div', { class: 'welcome' }, [
                  h('h1', 'Chat with the local model'),
                  h(
                    'p',
                    { class: 'muted' },
                    'A smaller Colloquy demo in Vue: live chats, streaming replies, branches.',
                  ),
                ]),
              ]),
          h(Composer, {
            busy,
            sessionId: id.value ?? '',
            ensureSession: ensure,
            onSend: (text: string, attachments: readonly AttachmentMeta[]) => void send(text, attachments),
            onStop: () => id.value && chat.stop(id.value),
            onError: (message: string) => void (notice.value = message),
          }),
        ]),
        h(SearchLauncher, {
          open: searching.value,
          onToggle: (v: boolean) => void (searching.value = v),
          onOpenAt: openAt,
        }),
        notice.value &&
          h('div', { class: 'notice', role: 'alert' }, [
            h('span', notice.value),
            h(
              'button',
              { type: 'button', 'aria-label': 'Dismiss', onClick: () => void (notice.value = null) },
              '×',
            ),
          ]),
      ])
    }
  },
})
