import type { SessionMeta } from '@colloquy/core'
import { statusLabel } from 'chat-kit'
import type { ReactNode } from 'react'

/** A session's status as a coloured dot with its name (the words of the message marks); why as a tooltip. */
export function StatusDot({ meta }: { meta: Pick<SessionMeta, 'status' | 'status_reason'> }): ReactNode {
  const s = statusLabel(meta)
  return (
    <span className={`status status-${s.state}`} title={s.detail} data-status={s.state}>
      <span className="dot" aria-hidden="true" />
      {s.label}
    </span>
  )
}
