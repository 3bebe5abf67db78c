import { useBranch } from '@colloquy/react'
import type { ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'
import { Icon } from './Icon.js'

/** "‹ 2 / 3 ›" under a message that has siblings (edits of a question, regenerated answers). */
export function BranchPicker({
  sessionId,
  entryId,
  disabled,
}: {
  sessionId: string
  entryId: string
  disabled: boolean
}): ReactNode {
  const branch = useBranch(sessionId, entryId)
  const { run } = useChat()
  if (branch.status !== 'ready' || branch.data.count < 2) return null
  const { index, count, prev, next } = branch.data
  return (
    <span className="branch-picker" role="group" aria-label={`Version ${index + 1} of ${count}`}>
      <button
        type="button"
        aria-label="Previous version"
        disabled={disabled || index === 0}
        onClick={() => void run(prev())}
      >
        <Icon name="chevronLeft" size={14} />
      </button>
      <span className="branch-count">
        {index + 1} / {count}
      </span>
      <button
        type="button"
        aria-label="Next version"
        disabled={disabled || index === count - 1}
        onClick={() => void run(next())}
      >
        <Icon name="chevronRight" size={14} />
      </button>
    </span>
  )
}
