import type { SessionMeta } from '@colloquy/core'
import { statusLabel, type ReplyEnd } from 'chat-kit'
import { h, type VNode } from 'vue'

/** A session's status as a dot and its name: the words of chat-kit's `statusLabel`, as in every app. */
export function statusDot(meta: Pick<SessionMeta, 'status' | 'status_reason'>): VNode {
  const s = statusLabel(meta)
  return h('span', { class: `status status-${s.state}`, title: s.detail, 'data-status': s.state }, [
    h('span', { class: 'dot', 'aria-hidden': 'true' }),
    s.label,
  ])
}

/** The mark on a reply that did not finish (chat-kit's `replyEnd`), as the React apps render it. */
export function replyEndMark(end: ReplyEnd | null): VNode | null {
  return (
    end &&
    h(
      'span',
      { class: `reply-end reply-end-${end.state}`, 'data-reply-end': end.state, title: end.detail },
      end.label,
    )
  )
}

/** A fork's mark beside its title, outside the ellipsised text. */
export function forkBadge(forked: boolean): VNode | null {
  return forked ? h('span', { class: 'fork-badge', title: 'Forked from another chat' }, 'fork') : null
}
