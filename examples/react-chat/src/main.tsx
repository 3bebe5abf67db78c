import { StrictMode, useEffect, useState, type ReactNode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App.js'
import { UnlockScreen } from './components/UnlockScreen.js'
import { chatsEncrypted, markChatsEncrypted } from './data/encryption.js'
import { openApp, registerServiceWorker, type AppData } from './data/open-app.js'
import 'chat-kit/styles.css'

registerServiceWorker()
const root = createRoot(document.getElementById('root')!)

const failed = (error: unknown): ReactNode => (
  <div className="gone" role="alert">
    <p>Could not open the chat database: {error instanceof Error ? error.message : String(error)}</p>
    <p className="muted">Private browsing or blocked storage can cause this.</p>
  </div>
)

/**
 * The app once its store is open: encrypted chats ask for the passphrase first, and again
 * whenever the store is locked (here or in another tab).
 */
function Root({ first }: { first: AppData | null }): ReactNode {
  const [data, setData] = useState(first)
  const [locked, setLocked] = useState(false)
  useEffect(() => {
    const sub = data?.store.locked$.subscribe(setLocked)
    return () => sub?.unsubscribe()
  }, [data])
  // Typing, clicking and scrolling are use: they keep encrypted chats from locking ("Lock after").
  useEffect(() => {
    const touch = (): void => data?.store.touch()
    const events = ['keydown', 'pointerdown', 'wheel'] as const
    for (const e of events) window.addEventListener(e, touch, { passive: true })
    return () => events.forEach((e) => window.removeEventListener(e, touch))
  }, [data])
  if (!data) return <UnlockScreen onUnlock={(p) => openApp(p).then(setData)} />
  const encrypt = async (passphrase: string): Promise<void> => {
    // The palette's index of the clear chats (fetched only if the palette was used).
    await import('chat-kit/search').then((m) => m.closeSearchOf(data.store))
    await data.store.close()
    const next = await openApp(passphrase)
    // The store deleted the search index written while the chats were clear (it held their words).
    markChatsEncrypted()
    setData(next)
  }
  // Locked: the app is unmounted, so no chat stays on screen (nor in the page's memory).
  if (locked) return <UnlockScreen onUnlock={(p) => data.store.unlock(p)} />
  return <App key={String(chatsEncrypted())} data={data} onEncrypt={encrypt} />
}

if (chatsEncrypted())
  root.render(
    <StrictMode>
      <Root first={null} />
    </StrictMode>,
  )
else
  openApp().then(
    (data) =>
      root.render(
        <StrictMode>
          <Root first={data} />
        </StrictMode>,
      ),
    (error: unknown) => root.render(failed(error)),
  )
