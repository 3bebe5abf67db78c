import { hostOf } from '@colloquy/core/host'
import { ColloquyProvider } from '@colloquy/react'
import { useCallback, useEffect, useState, type ReactNode } from 'react'
import { ChatView } from './components/ChatView.js'
import { DropZone } from './components/DropZone.js'
import { Notice } from './components/Notice.js'
import { SearchLauncher } from './components/SearchLauncher.js'
import { SettingsDialog } from './components/SettingsDialog.js'
import { Sidebar } from './components/Sidebar.js'
import { TopBar } from './components/TopBar.js'
import type { Target } from './components/Transcript.js'
import { ChatProvider } from './data/chat-context.js'
import { useTranscriptImport, type PickedFile } from './data/import-transcripts.js'
import type { AppData } from './data/open-app.js'
import { useOpenSession } from './data/route.js'
import {
  connectSync,
  loadSyncSettings,
  saveSyncSettings,
  type SyncClient,
  type SyncSettings,
} from './data/sync.js'

export function App({
  data,
  onEncrypt,
}: {
  data: AppData
  /** "Encrypt my chats": reopens the store encrypted with this passphrase. */
  onEncrypt(passphrase: string): Promise<void>
}): ReactNode {
  const [openId, open] = useOpenSession()
  const [settings, setSettings] = useState(loadSyncSettings)
  const [sync, setSync] = useState<SyncClient | null>(null)
  const [showSettings, setShowSettings] = useState(false)
  const [showChats, setShowChats] = useState(false)
  const [searching, setSearching] = useState(false)
  // The message a search hit opened its chat at (highlighted while that chat is open).
  const [found, setFound] = useState<(Target & { session_id: string }) | null>(null)

  // One sync client per saved settings; the old one stops before the next starts.
  useEffect(() => {
    const client = connectSync(data.store, settings)
    setSync(client)
    return () => client?.stop()
  }, [data.store, settings])

  const saveSettings = (next: SyncSettings): void => {
    saveSyncSettings(next)
    setSettings(next)
    setShowSettings(false)
  }
  const openChat = useCallback(
    (id: string | null) => {
      open(id)
      setShowChats(false)
    },
    [open],
  )
  const openAt = useCallback(
    (session_id: string, entry_id: string | null) => {
      openChat(session_id)
      setFound(entry_id ? { session_id, entry_id, at: performance.now() } : null)
    },
    [openChat],
  )
  // Transcripts dropped anywhere or picked in the sidebar; each opens once imported. Their
  // progress is in the sidebar, so on a phone it slides in (opening a chat slides it out again).
  const imports = useTranscriptImport(data.store, openChat)
  const { add } = imports
  const importFiles = useCallback(
    (files: PickedFile[]) => {
      setShowChats(true)
      add(files)
    },
    [add],
  )

  return (
    <ColloquyProvider store={data.store} sync={sync}>
      <ChatProvider chat={data.chat}>
        <div className={`app${showChats ? ' show-chats' : ''}`}>
          <Sidebar
            openId={openId}
            onOpen={openChat}
            onImport={importFiles}
            imports={imports}
            onSearch={() => {
              setShowChats(false)
              setSearching(true)
            }}
          />
          <main className="main">
            <TopBar
              sessionId={openId}
              syncConfigured={settings.url !== ''}
              onSettings={() => setShowSettings(true)}
              onMenu={() => setShowChats((v) => !v)}
              onOpen={openChat}
            />
            <ChatView
              key={openId ?? ''}
              sessionId={openId}
              onOpen={openChat}
              target={found?.session_id === openId ? found : null}
            />
          </main>
        </div>
        {showSettings && (
          <SettingsDialog
            settings={settings}
            onSave={saveSettings}
            onClose={() => setShowSettings(false)}
            encrypted={hostOf(data.store).keyring !== null}
            onEncrypt={async (passphrase) => {
              setShowSettings(false)
              await onEncrypt(passphrase)
            }}
            onLock={() => {
              setShowSettings(false)
              void data.store.lock()
            }}
          />
        )}
        <DropZone onFiles={importFiles} />
        <SearchLauncher open={searching} setOpen={setSearching} onOpenAt={openAt} />
        <Notice />
      </ChatProvider>
    </ColloquyProvider>
  )
}
