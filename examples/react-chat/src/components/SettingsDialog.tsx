import { useEffect, useState, type ReactNode } from 'react'
import { MIN_PASSPHRASE, lockAfterMinutes, setLockAfterMinutes } from '../data/encryption.js'
import { SYNC_AVAILABLE, type SyncSettings } from '../data/sync.js'

interface Props {
  settings: SyncSettings
  onSave(settings: SyncSettings): void
  onClose(): void
  /** Whether the chats in this browser are encrypted (and unlocked: the app shows them). */
  encrypted: boolean
  /** "Encrypt my chats" with this passphrase. */
  onEncrypt(passphrase: string): Promise<void>
  onLock(): void
}

/** Server URL and token for sync, kept in this browser only; and "Encrypt my chats". */
export function SettingsDialog({
  settings,
  onSave,
  onClose,
  encrypted,
  onEncrypt,
  onLock,
}: Props): ReactNode {
  const [url, setUrl] = useState(settings.url)
  const [token, setToken] = useState(settings.token)
  const [encrypting, setEncrypting] = useState(false)
  const [passphrase, setPassphrase] = useState('')
  const [again, setAgain] = useState('')
  const [encryptError, setEncryptError] = useState<string | null>(null)
  const [lockAfter, setLockAfter] = useState(lockAfterMinutes)
  const passphraseOk = passphrase.length >= MIN_PASSPHRASE && passphrase === again
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => void (e.key === 'Escape' && onClose())
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  const badUrl = url.trim() !== '' && !/^https?:\/\/\S+$/.test(url.trim())
  return (
    <div className="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <form
        role="dialog"
        aria-modal="true"
        aria-labelledby="settings-title"
        className="dialog"
        onSubmit={(e) => {
          e.preventDefault()
          if (!badUrl) onSave({ url: url.trim(), token: token.trim() })
        }}
      >
        <h2 id="settings-title">Sync settings</h2>
        <p className="muted">
          Chats always live in this browser first. With a Colloquy server, they also sync to your other
          devices; with no server URL they stay in this browser only.
        </p>
        {!SYNC_AVAILABLE && (
          <p className="hint">
            This build does not include sync yet: the settings are kept and used once it does.
          </p>
        )}
        <label>
          Server URL
          <input
            type="url"
            placeholder="http://127.0.0.1:8787"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            aria-invalid={badUrl}
          />
        </label>
        {badUrl && <span className="error small">Use an http:// or https:// address.</span>}
        <label>
          Token
          <input
            type="password"
            autoComplete="off"
            placeholder="Bearer token"
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </label>
        <h2>Privacy</h2>
        {encrypted ? (
          <>
            <p className="muted">
              Your chats are encrypted in this browser.{' '}
              <button type="button" onClick={onLock}>
                Lock now
              </button>
            </p>
            <label>
              Lock after (from the next time the app opens)
              <select
                value={lockAfter}
                onChange={(e) => {
                  setLockAfterMinutes(Number(e.target.value))
                  setLockAfter(Number(e.target.value))
                }}
              >
                <option value={0}>never</option>
                {[1, 5, 15, 60].map((m) => (
                  <option key={m} value={m}>
                    {m} {m === 1 ? 'minute' : 'minutes'} without use
                  </option>
                ))}
              </select>
            </label>
          </>
        ) : (
          <>
            <label className="inline">
              <input type="checkbox" checked={encrypting} onChange={(e) => setEncrypting(e.target.checked)} />
              Encrypt my chats
            </label>
            {encrypting && (
              <>
                <p className="muted">
                  Chats are encrypted in this browser with a passphrase you choose; without it they cannot be
                  read, by anyone. It is asked for whenever the app opens.
                </p>
                <label>
                  Passphrase (at least {MIN_PASSPHRASE} characters)
                  <input
                    type="password"
                    autoComplete="new-password"
                    value={passphrase}
                    onChange={(e) => setPassphrase(e.target.value)}
                  />
                </label>
                <label>
                  The same again
                  <input
                    type="password"
                    autoComplete="new-password"
                    value={again}
                    onChange={(e) => setAgain(e.target.value)}
                  />
                </label>
                {encryptError && <span className="error small">{encryptError}</span>}
                <button
                  type="button"
                  className="primary"
                  disabled={!passphraseOk}
                  onClick={() => {
                    setEncryptError(null)
                    onEncrypt(passphrase).catch((e: unknown) =>
                      setEncryptError(e instanceof Error ? e.message : String(e)),
                    )
                  }}
                >
                  Encrypt my chats
                </button>
              </>
            )}
          </>
        )}
        <div className="dialog-buttons">
          {/* Sync off: no server URL, so no sync client; the chats stay in this browser. */}
          {settings.url && (
            <button type="button" onClick={() => onSave({ url: '', token: '' })}>
              Turn sync off
            </button>
          )}
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={badUrl}>
            Save
          </button>
        </div>
      </form>
    </div>
  )
}
