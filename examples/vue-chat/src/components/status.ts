import type { SessionStatus } from '@colloquy/core'
import { h, type VNode } from 'vue'

const labels: Record<SessionStatus, string> = { idle: 'Idle', working: 'Replying', done: 'Done', error: 'Error' }

export const statusDot = (status: SessionStatus): VNode =>
  h('span', { class: `status status-${status}` }, [h('span', { class: 'dot', 'aria-hidden': 'true' }), labels[status]])
