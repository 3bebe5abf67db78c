import { useState, type FormEvent, type ReactNode } from 'react'
import { loadEndpoint, saveEndpoint } from '../endpoint.js'

/** The OpenAI-compatible endpoint to call instead of the local model (kept in this browser). */
export function EndpointForm(): ReactNode {
  const saved = loadEndpoint()
  const [url, setUrl] = useState(saved?.url ?? '')
  const [key, setKey] = useState(saved?.key ?? '')
  const [model, setModel] = useState(saved?.model ?? 'gpt-4o-mini')
  const [note, setNote] = useState(saved ? `Using ${saved.model}` : 'Using the local model')
  const save = (e: FormEvent): void => {
    e.preventDefault()
    saveEndpoint(url.trim() ? { url, key, model } : null)
    setNote(url.trim() ? `Using ${model}` : 'Using the local model')
  }
  return (
    <form className="settings" onSubmit={save} aria-label="Model endpoint">
      <strong>Model endpoint</strong>
      <input
        aria-label="Endpoint URL"
        placeholder="https://api.openai.com/v1"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
      />
      <input
        aria-label="API key"
        type="password"
        placeholder="API key"
        value={key}
        onChange={(e) => setKey(e.target.value)}
      />
      <input
        aria-label="Model name"
        placeholder="model"
        value={model}
        onChange={(e) => setModel(e.target.value)}
      />
      <button className="button" type="submit">
        Save
      </button>
      <small data-endpoint-note>{note}</small>
    </form>
  )
}
