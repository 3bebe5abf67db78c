import { createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { SessionError } from '@colloquy/core'
import type { HttpBindings } from '@hono/node-server'
import type { Hono } from 'hono'
import type { Env } from './app.js'
import { HttpError } from './errors.js'
import type { Service } from './rpc.js'

export interface AttachmentRoutesOptions {
  service: Service
  /** The store's `max_attachment_bytes`: an upload past it is cut off with 413. */
  maxBytes: number
}

const notFound = (session_id: string): SessionError => new SessionError('session/not_found', `session ${session_id} not found`)

/**
 * Streamed attachment bytes, so a large file never sits in a JSON body (the RPC's base64 form
 * is bounded by the body limit):
 * - `POST /attachments/:session_id?name=…&mime=…` takes the raw bytes as the body, spooled to a
 *   temporary file while counted (cut off past `maxBytes`), and answers put-attachment's
 *   `{ attachment, block }`.
 * - `GET /attachments/:session_id/:attachment_id` streams the bytes back with their type.
 * Both sit behind the server's authentication, and a session the caller does not own answers
 * exactly like an unknown one.
 */
export function attachmentRoutes(app: Hono<Env>, { service, maxBytes }: AttachmentRoutesOptions): void {
  const { store, tenancy } = service
  const visible = (principal: string | undefined, session_id: string): boolean =>
    principal === undefined ? store.engine.state.sessions.has(session_id) : tenancy.standing(principal, session_id) === 'own'

  app.post('/attachments/:session_id', async (c) => {
    const session_id = c.req.param('session_id')
    const name = c.req.query('name') ?? ''
    const mime = c.req.query('mime') ?? c.req.header('content-type') ?? ''
    // On a refusal the rest of the body is drained unread, so the client gets the answer.
    const refuse = (): void => void (c.env as Partial<HttpBindings> | undefined)?.incoming?.resume()
    // Checked before a byte is read: nothing is spooled for someone else's (or no) session.
    if (name.trim() === '') {
      refuse()
      throw new SessionError('session/invalid_request', 'name must not be blank')
    }
    if (!visible(c.get('principal'), session_id)) {
      refuse()
      throw notFound(session_id)
    }
    const declared = Number(c.req.header('content-length'))
    if (declared > maxBytes) {
      refuse()
      throw new SessionError('session/attachment_too_large', `attachment is ${declared} bytes, the limit is ${maxBytes}`)
    }
    const body = c.req.raw.body
    if (!body) throw new SessionError('session/invalid_request', 'expected the attachment bytes as the request body')
    const spool = await mkdtemp(join(tmpdir(), 'colloquy-upload-'))
    try {
      const path = join(spool, 'bytes')
      let size = 0
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length
          if (size > maxBytes) done(new SessionError('session/attachment_too_large', `attachment exceeds the limit of ${maxBytes} bytes`))
          else done(null, chunk)
        },
      })
      try {
        await pipeline(Readable.fromWeb(body as import('node:stream/web').ReadableStream), counter, createWriteStream(path))
      } catch (e) {
        if (e instanceof SessionError) refuse()
        throw e
      }
      // In memory before the spool goes: a storage may keep the Blob it is handed (memory
      // storage does), and a Blob over a deleted file cannot be read.
      const file = new Blob([await readFile(path)], { type: mime })
      return c.json(await store.putAttachment({ session_id, name, mime, file }))
    } finally {
      await rm(spool, { recursive: true, force: true })
    }
  })

  app.get('/attachments/:session_id/:attachment_id', async (c) => {
    const session_id = c.req.param('session_id')
    const attachment_id = c.req.param('attachment_id')
    const principal = c.get('principal')
    const meta = visible(principal, session_id) ? await store.getAttachment({ session_id, attachment_id, include_data: false }) : null
    const blob = meta && (await store.getAttachmentBlob(session_id, attachment_id))
    if (!meta || !blob) throw new HttpError(404, 'session/not_found', `attachment ${attachment_id} of session ${session_id} not found`)
    return new Response(blob.stream(), {
      headers: {
        'Content-Type': meta.attachment.mime,
        'Content-Length': String(blob.size),
        // Uploaded content is served inert: never sniffed, never run as a page of this origin.
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "sandbox; default-src 'none'",
        'Content-Disposition': `inline; filename*=UTF-8''${encodeURIComponent(meta.attachment.name)}`,
        ETag: `"${meta.attachment.sha256}"`,
        'Cache-Control': 'private, max-age=31536000, immutable',
      },
    })
  })
}
