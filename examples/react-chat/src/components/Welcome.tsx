import type { ReactNode } from 'react'

const suggestions = [
  'Show me a demo of everything you can do',
  'What is 12 * (3 + 4)?',
  'Draw a lighthouse at dusk',
  'What time is it?',
]

/** The empty state: what this demo is, and prompts that show off each kind of block. */
export function Welcome({ onPick }: { onPick(prompt: string): void }): ReactNode {
  return (
    <div className="welcome">
      <img src="/icons/icon.svg" alt="" width={56} height={56} />
      <h1>Chat with the local model</h1>
      <p className="muted">
        Replies stream from a small deterministic model that runs in this tab: no network, no API key. Chats
        are kept in IndexedDB, survive reloads, update live across tabs and keep every branch.
      </p>
      <div className="suggestions">
        {suggestions.map((s) => (
          <button key={s} type="button" onClick={() => onPick(s)}>
            {s}
          </button>
        ))}
      </div>
    </div>
  )
}
