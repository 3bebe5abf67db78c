import { SessionError, type AttachmentMeta } from '@colloquy/core'
import { mimeOrOctet } from '@colloquy/core/wire'
import type { SearchRequest } from '@colloquy/core/search'
import type { PullResponse, PushRequest, PushResponse, StreamMessage } from '@colloquy/core/protocol'
import type { SerializedKeyring } from '@colloquy/core/crypto'

/** How the sync engine reaches a server; the HTTP one below, or a test double. */
export interface Transport {
  push(request: PushRequest): Promise<PushResponse>
  /** `epoch`: the one the checkpoint was taken in, if the server gave one. */
  pull(since: number, limit: number, epoch?: string): Promise<PullResponse>
  /** Opens the live stream from `since`; `onClose` fires once, with the reason when it failed. */
  stream(
    since: number,
    onMessage: (m: StreamMessage) => void,
    onClose: (error?: unknown) => void,
    epoch?: string,
  ): { close(): void }
  /** Puts an attachment (metadata and bytes) on the server; bytes it already holds are not sent again. */
  uploadAttachment?(session_id: string, attachment: AttachmentMeta, bytes: Blob): Promise<void>
  /** An attachment's bytes, or null when the server has none. */
  downloadAttachment?(session_id: string, attachment_id: string): Promise<Blob | null>
  /** The server's `session::search` answer for a checked request (unchecked: the caller checks it). */
  search?(request: SearchRequest): Promise<unknown>
  /** The caller's wrapped keyring the server keeps (end-to-end encryption), or null. */
  getKeyring?(): Promise<unknown>
  /** Has the server keep the caller's wrapped keyring. */
  putKeyring?(keyring: SerializedKeyring): Promise<void>
}

export interface HttpTransportOptions {
  url: string
  token?: string
  fetch?: typeof fetch
  WebSocket?: typeof WebSocket
  /**
   * How long a push, pull, search or keyring request may wait for its whole answer, in ms
   * (default 30,000). Past it the request fails as a network error and is retried after a
   * backoff: a connection that went silent (a phone changing networks) would otherwise hold sync
   * until the runtime gives up, minutes later or never. Attachment transfers, whose time grows
   * with their size, are not bounded by it.
   */
  timeoutMs?: number
}

/** `HttpTransportOptions.timeoutMs`'s default: far above a pull page's time on a slow network. */
const REQUEST_TIMEOUT_MS = 30_000

/** A failure worth retrying later (network, 5xx, 429) as opposed to one that needs a person (401, 400). */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    /** How long the server asked the client to wait (`Retry-After` of a 429 or 503), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message)
    this.name = 'TransportError'
  }
}

const epochParam = (epoch: string | undefined): string =>
  epoch === undefined ? '' : `&epoch=${encodeURIComponent(epoch)}`

/** The longest wait a server's answer is taken at its word for: a server is input too. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000

/** `Retry-After` in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS)
}

/**
 * How long a refusal that passes with time (429, 503) asks the client to wait, in ms: the body's
 * `retry_after_ms` (the server's own figure), else `Retry-After` (whole seconds); undefined for
 * any other status, or when neither is there or readable. Never past `MAX_RETRY_AFTER_MS`.
 */
export function waitAsked(status: number, body: unknown, header: string | null): number | undefined {
  if (status !== 429 && status !== 503) return undefined
  const ms = (body as { retry_after_ms?: unknown } | null | undefined)?.retry_after_ms
  if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) return Math.min(ms, MAX_RETRY_AFTER_MS)
  return retryAfter(header)
}

/** A refused answer as a TransportError: the server's message, whether to retry, and when. */
function failure(res: Response, body: unknown): TransportError {
  const message = (body as { error?: { message?: unknown } } | null | undefined)?.error?.message
  return new TransportError(
    typeof message === 'string' ? message : `HTTP ${res.status}`,
    res.status >= 500 || res.status === 429 || res.status === 408,
    res.status,
    waitAsked(res.status, body, res.headers.get('retry-after')),
  )
}

export function httpTransport(options: HttpTransportOptions): Transport {
  const base = options.url.replace(/\/+$/, '')
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (options.token) headers.authorization = `Bearer ${options.token}`

  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS
  // Checked here, once: a bad value would otherwise fail every request, each as a retry.
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)
    throw new SessionError(
      'session/invalid_request',
      `timeoutMs must be a positive integer of ms, not ${String(timeoutMs)}`,
    )
  const request = async <T>(path: string, init: RequestInit): Promise<T> => {
    // One bound for the answer, its body included: a body can stall as well as its headers.
    const signal = AbortSignal.timeout(timeoutMs)
    const silent = (): TransportError =>
      new TransportError(`network: no answer from the server in ${timeoutMs} ms`, true)
    let res: Response
    try {
      res = await doFetch(`${base}${path}`, { ...init, headers, signal })
    } catch (e) {
      if (signal.aborted) throw silent()
      throw new TransportError(`network: ${e instanceof Error ? e.message : String(e)}`, true)
    }
    const body = (await res.json().catch(() => undefined)) as
      { error?: { code: string; message: string } } | undefined
    if (signal.aborted) throw silent()
    if (!res.ok) throw failure(res, body)
    if (body === undefined) throw new TransportError('malformed response', true, res.status)
    return body as T
  }

  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {}
  const attachmentPath = (session_id: string, attachment_id: string): string =>
    `/attachments/${encodeURIComponent(session_id)}/${encodeURIComponent(attachment_id)}`
  const send = async (url: string, init: RequestInit): Promise<Response> => {
    try {
      return await doFetch(url, init)
    } catch (e) {
      throw new TransportError(`network: ${e instanceof Error ? e.message : String(e)}`, true)
    }
  }
  const failed = async (res: Response): Promise<TransportError> =>
    failure(res, await res.json().catch(() => undefined))

  return {
    async uploadAttachment(session_id, a, bytes) {
      // A type this replica stored before the mime rule goes up as bytes: the server refuses a bad one.
      const query = new URLSearchParams({
        name: a.name,
        mime: mimeOrOctet(a.mime),
        size: String(a.size),
        sha256: a.sha256,
        created_at: String(a.created_at),
      })
      // A sealed attachment (end-to-end encryption): its name and type are in its box.
      const box = (a as { box?: unknown }).box
      if (typeof box === 'string') query.set('box', box)
      const url = `${base}/sync${attachmentPath(session_id, a.attachment_id)}?${query}`
      // First without the bytes: the server may already hold the same content (sha256). Like
      // every write, it carries a Content-Type no page can send cross-site without a preflight.
      const reuse = await send(`${url}&reuse=1`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
      })
      if (reuse.ok) return
      if (reuse.status !== 409) throw await failed(reuse)
      const res = await send(url, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        body: bytes,
      })
      if (!res.ok) throw await failed(res)
    },
    async downloadAttachment(session_id, attachment_id) {
      const res = await send(`${base}${attachmentPath(session_id, attachment_id)}`, { headers: auth })
      if (res.status === 404) return null
      if (!res.ok) throw await failed(res)
      return res.blob()
    },
    search: (req) => request<unknown>('/rpc/session::search', { method: 'POST', body: JSON.stringify(req) }),
    getKeyring: async () =>
      (await request<{ keyring?: unknown }>('/keyring', { method: 'GET' })).keyring ?? null,
    putKeyring: async (keyring) => {
      await request('/keyring', { method: 'PUT', body: JSON.stringify(keyring) })
    },
    push: (req) => request<PushResponse>('/sync/push', { method: 'POST', body: JSON.stringify(req) }),
    pull: (since, limit, epoch) =>
      request<PullResponse>(`/sync/pull?since=${since}&limit=${limit}${epochParam(epoch)}`, {
        method: 'GET',
      }),
    stream(since, onMessage, onClose, epoch) {
      const WS = options.WebSocket ?? globalThis.WebSocket
      if (!WS) {
        queueMicrotask(() => onClose(new SessionError('session/storage', 'no WebSocket implementation')))
        return { close() {} }
      }
      // Browsers cannot set headers on a WebSocket: the token travels as a query parameter.
      const wsUrl = `${base.replace(/^http/, 'ws')}/sync/stream?since=${since}${epochParam(epoch)}${options.token ? `&token=${encodeURIComponent(options.token)}` : ''}`
      const ws = new WS(wsUrl)
      let closed = false
      const finish = (error?: unknown): void => {
        if (closed) return
        closed = true
        onClose(error)
      }
      ws.onmessage = (ev: MessageEvent) => {
        // Nothing after close(): the caller has moved on (a reset, a gap).
        if (closed) return
        try {
          onMessage(JSON.parse(typeof ev.data === 'string' ? ev.data : String(ev.data)) as StreamMessage)
        } catch (e) {
          finish(e)
          ws.close()
        }
      }
      ws.onerror = () => finish(new TransportError('stream error', true))
      // 4401 and 4429 are the server's WebSocket forms of HTTP 401 and 429.
      ws.onclose = (ev: CloseEvent) =>
        finish(
          ev.code === 1000
            ? undefined
            : new TransportError(
                `stream closed (${ev.code})`,
                ev.code !== 4401,
                ev.code === 4401 ? 401 : ev.code === 4429 ? 429 : undefined,
              ),
        )
      return {
        close() {
          closed = true
          ws.close(1000)
        },
      }
    },
  }
}
