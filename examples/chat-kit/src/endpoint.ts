/**
 * An OpenAI-compatible endpoint the framework examples can call instead of the local model:
 * `POST <url>/chat/completions` with `stream: true`, read as server-sent events, as the real API
 * and its clones (vLLM, llama.cpp, Ollama, OpenRouter…) speak it.
 */
export interface Endpoint {
  /** The API base, e.g. `https://api.openai.com/v1`. */
  url: string
  key: string
  model: string
}

export interface CompletionMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** A streamed delta: text, or reasoning when the server sends `reasoning_content`. */
export interface CompletionDelta {
  text?: string
  reasoning?: string
}

const STORAGE_KEY = 'colloquy-examples:endpoint'

/** The endpoint saved in this browser, or null (then the built-in local model answers). */
export function loadEndpoint(): Endpoint | null {
  try {
    const raw = typeof localStorage !== 'undefined' ? localStorage.getItem(STORAGE_KEY) : null
    const e = raw ? (JSON.parse(raw) as Partial<Endpoint>) : null
    return e &&
      typeof e.url === 'string' &&
      e.url.trim() &&
      typeof e.key === 'string' &&
      typeof e.model === 'string'
      ? { url: e.url, key: e.key, model: e.model }
      : null
  } catch {
    return null
  }
}

/** Saves the endpoint (or forgets it, with null). */
export function saveEndpoint(e: Endpoint | null): void {
  if (e && e.url.trim())
    localStorage.setItem(
      STORAGE_KEY,
      JSON.stringify({ url: e.url.trim(), key: e.key.trim(), model: e.model.trim() }),
    )
  else localStorage.removeItem(STORAGE_KEY)
}

/** Streams a completion's deltas; rejects with the server's message on an HTTP error. */
export async function* streamCompletion(
  endpoint: Endpoint,
  messages: CompletionMessage[],
  signal?: AbortSignal,
): AsyncGenerator<CompletionDelta> {
  const res = await fetch(`${endpoint.url.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(endpoint.key && { authorization: `Bearer ${endpoint.key}` }),
    },
    body: JSON.stringify({ model: endpoint.model, messages, stream: true }),
    signal,
  })
  if (!res.ok || !res.body)
    throw new Error(`the endpoint answered ${res.status}: ${(await res.text()).slice(0, 200)}`)
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value
    // Events are separated by a blank line; a partial one waits for the next read.
    let end: number
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const event = buffer.slice(0, end)
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '')
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
      if (!data) continue
      if (data === '[DONE]') return
      const json = JSON.parse(data) as {
        choices?: { delta?: { content?: string | null; reasoning_content?: string | null } }[]
        error?: { message?: string }
      }
      if (json.error) throw new Error(json.error.message ?? 'the endpoint reported an error')
      const delta = json.choices?.[0]?.delta
      if (delta?.reasoning_content) yield { reasoning: delta.reasoning_content }
      if (delta?.content) yield { text: delta.content }
    }
  }
}
