import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { createStore, indexedDbStorage } from '@colloquy/core'
import { App } from './App.js'
import 'chat-kit/frameworks.css'

const root = createRoot(document.getElementById('root')!)
createStore({ storage: indexedDbStorage({ name: 'colloquy-assistant-ui' }) }).then(
  (store) =>
    root.render(
      <StrictMode>
        <App store={store} />
      </StrictMode>,
    ),
  (error: unknown) =>
    root.render(
      <p role="alert">
        Could not open the chat database: {error instanceof Error ? error.message : String(error)}
      </p>,
    ),
)
