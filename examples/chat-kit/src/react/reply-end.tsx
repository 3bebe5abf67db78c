import type { ReactNode } from 'react'
import type { ReplyEnd } from '../reply-end.js'

/** The mark on a reply that did not finish: "Stopped", "Interrupted" or "Failed", why as a tooltip. */
export function ReplyEndMark({ end }: { end: ReplyEnd | null }): ReactNode {
  if (!end) return null
  return (
    <span className={`reply-end reply-end-${end.state}`} data-reply-end={end.state} title={end.detail}>
      {end.label}
    </span>
  )
}

/** A fork's mark beside its title in a chat list, outside the ellipsised text so it always shows. */
export function ForkBadge({ forked }: { forked: boolean }): ReactNode {
  return forked ? (
    <span className="fork-badge" title="Forked from another chat">
      fork
    </span>
  ) : null
}
