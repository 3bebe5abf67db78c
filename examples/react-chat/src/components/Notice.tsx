import type { ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'
import { Icon } from './Icon.js'

/** The last failed action, until dismissed. */
export function Notice(): ReactNode {
  const { notice, dismiss } = useChat()
  if (!notice) return null
  return (
    <div className="notice" role="alert">
      <span>{notice}</span>
      <button type="button" aria-label="Dismiss" onClick={dismiss}>
        <Icon name="x" />
      </button>
    </div>
  )
}
