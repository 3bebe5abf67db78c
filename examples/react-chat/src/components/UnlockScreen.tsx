import { SessionError } from '@colloquy/core'
import { useState, type ReactNode } from 'react'

/** Asks for the passphrase of encrypted chats (at start, and after a lock in any tab). */
export function UnlockScreen({ onUnlock }: { onUnlock(passphrase: string): Promise<unknown> }): ReactNode {
  const [passphrase, setPassphrase] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  return (
    <div className="overlay">
      <form
        className="dialog"
        aria-labelledby="unlock-title"
        onSubmit={(e) => {
          e.preventDefault()
          setBusy(true)
          setError(null)
          onUnlock(passphrase).then(
            () => setBusy(false),
            (err: unknown) => {
              setBusy(false)
              setError(
                err instanceof SessionError && err.code === 'session/wrong_passphrase'
                  ? 'That passphrase does not open these chats.'
                  : String(err instanceof Error ? err.message : err),
              )
            },
          )
        }}
      >
        <h2 id="unlock-title">Your chats are encrypted</h2>
        <p className="muted">Enter your passphrase to open them. It never leaves this browser.</p>
        <label>
          Passphrase
          <input
            type="password"
            autoFocus
            autoComplete="current-password"
            value={passphrase}
            onChange={(e) => setPassphrase(e.target.value)}
          />
        </label>
        {error && (
          <span className="error small" role="alert">
            {error}
          </span>
        )}
        <div className="dialog-buttons">
          <button type="submit" className="primary" disabled={busy || passphrase === ''}>
            {busy ? 'Unlocking…' : 'Unlock'}
          </button>
        </div>
      </form>
    </div>
  )
}
