import { useState, type ReactNode } from 'react'
import { Icon } from './Icon.js'

interface Props {
  busy: boolean
  onSend(text: string): void
  onStop(): void
}

/** Enter sends, Shift+Enter breaks the line; while a reply streams, the button stops it. */
export function Composer({ busy, onSend, onStop }: Props): ReactNode {
  const [text, setText] = useState('')
  const send = (): void => {
    if (busy || !text.trim()) return
    onSend(text)
    setText('')
  }
  return (
    <form className="composer" onSubmit={(e) => (e.preventDefault(), send())}>
      <textarea aria-label="Message" placeholder="Message the local model…" rows={1} value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault()
            send()
          }
        }} />
      {busy ? (
        <button type="button" className="send stop" aria-label="Stop reply" title="Stop" onClick={onStop}><Icon name="stop" /></button>
      ) : (
        <button type="submit" className="send" aria-label="Send message" title="Send" disabled={!text.trim()}><Icon name="send" /></button>
      )}
    </form>
  )
}
