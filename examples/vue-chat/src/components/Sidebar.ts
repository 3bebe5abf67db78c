import { useSessions } from '@colloquy/vue'
import { displayTitle } from 'chat-kit'
import { defineComponent, h } from 'vue'
import { PathCount } from './PathCount.js'
import { forkBadge, statusDot } from './status.js'

/** The chats, most recently changed first, live across tabs. */
export const Sidebar = defineComponent({
  props: { openId: { type: String, default: '' } },
  emits: {
    open: (id: string | null) => id === null || typeof id === 'string',
    /** Opens the search palette (as Ctrl/Cmd+K does), for a mouse or a touch screen. */
    search: () => true,
  },
  setup(props, { emit }) {
    // Most recently changed first: a chat that gets a message moves to the top.
    const sessions = useSessions({ order: 'updated_desc' })
    return () => {
      const s = sessions.value
      return h('aside', { class: 'sidebar' }, [
        h('div', { class: 'brand' }, [
          h('img', { src: '/icon.svg', alt: '', width: 28, height: 28 }),
          h('span', 'Colloquy · Vue'),
        ]),
        // A blank chat: the session is created by its first message.
        h('button', { type: 'button', class: 'new-chat', onClick: () => emit('open', null) }, '+ New chat'),
        h(
          'button',
          {
            type: 'button',
            class: 'new-chat',
            'aria-keyshortcuts': 'Control+K Meta+K',
            onClick: () => emit('search'),
          },
          'Search chats',
        ),
        h('nav', { class: 'session-list', 'aria-label': 'Chats' }, [
          s.status === 'ready' && s.data.length === 0 && h('p', { class: 'muted pad' }, 'No chats yet.'),
          s.status === 'ready' &&
            h(
              'ul',
              s.data.map((meta) =>
                h(
                  'li',
                  { key: meta.session_id, class: ['session', meta.session_id === props.openId && 'open'] },
                  [
                    h(
                      'a',
                      {
                        href: `#/c/${encodeURIComponent(meta.session_id)}`,
                        onClick: (e: Event) => (e.preventDefault(), emit('open', meta.session_id)),
                      },
                      [
                        h('span', { class: 'session-head' }, [
                          h('span', { class: 'session-title' }, displayTitle(meta.title)),
                          forkBadge(meta.forked_from !== undefined),
                        ]),
                        h('span', { class: 'session-info' }, [
                          statusDot(meta),
                          h(PathCount, { sessionId: meta.session_id }),
                        ]),
                      ],
                    ),
                  ],
                ),
              ),
            ),
        ]),
      ])
    }
  },
})
