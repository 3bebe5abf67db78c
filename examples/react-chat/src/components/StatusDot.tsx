import type { SessionStatus } from '@colloquy/core'
import type { ReactNode } from 'react'

const labels: Record<SessionStatus, string> = { idle: 'Idle', working: 'Replying', done: 'Done', error: 'Error' }

/** A session's status as a coloured dot with its name; the reason (e.g. "interrupted") as a tooltip. */
export function StatusDot({ status, reason }: { status: SessionStatus; reason?: string }): ReactNode {
  return (
    <span className={`status status-${status}`} title={reason ? `${labels[status]}: ${reason}` : labels[status]}>
      <span className="dot" aria-hidden="true" />
      {labels[status]}
    </span>
  )
}
