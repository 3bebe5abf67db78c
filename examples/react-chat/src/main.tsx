import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App.js'
import { openApp, registerServiceWorker } from './data/open-app.js'
import 'chat-kit/styles.css'

registerServiceWorker()
const root = createRoot(document.getElementById('root')!)
openApp().then(
  (data) =>
    root.render(
      <StrictMode>
        <App data={data} />
      </StrictMode>,
    ),
  (error: unknown) =>
    root.render(
      <div className="gone" role="alert">
        <p>Could not open the chat database: {error instanceof Error ? error.message : String(error)}</p>
        <p className="muted">Private browsing or blocked storage can cause this.</p>
      </div>,
    ),
)
