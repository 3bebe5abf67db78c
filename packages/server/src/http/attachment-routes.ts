import { createHash } from 'node:crypto'
import { createWriteStream, openAsBlob } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { SessionError } from '@colloquy/core'
import type { HttpBindings } from '@hono/node-server'
import type { Context, Hono } from 'hono'
import type { Env } from './app.js'
import { HttpError } from '../errors.js'
import type { Service } from './rpc.js'
import { findSameBytes } from './same-bytes.js'
import { workOf } from '../work.js'

export interface AttachmentRoutesOptions {
  service: Service
  /** The store's `max_attachment_bytes`: an upload past it is cut off with 413. */
  maxBytes: number
}

const notFound = (session_id: string): SessionError => new SessionError('session/not_found', `session ${session_id} not found`)

/** A spooled upload: its bytes as a Blob backed by the spool file, counted and hashed on the way in. */
interface Spooled {
  readonly file: Blob
  readonly size: number
  readonly sha256: string
}

/**
 * The request body, at most `maxBytes` (413 past it), spooled to a temporary file while counted
 * and hashed, handed to `use` as a file-backed Blob (nothing of it in memory), and removed once
 * `use` settles: storages copy the bytes they keep inside their commit.
 */
async function spoolBody<T>(c: Context<Env>, maxBytes: number, refuse: () => void, type: string, use: (body: Spooled) => Promise<T>): Promise<T> {
  const body = c.req.raw.body
  const spool = await mkdtemp(join(tmpdir(), 'colloquy-upload-'))
  try {
    const path = join(spool, 'bytes')
    let size = 0
    const hash = createHash('sha256')
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length
        if (size > maxBytes) return done(new SessionError('session/attachment_too_large', `attachment exceeds the limit of ${maxBytes} bytes`))
        hash.update(chunk)
        done(null, chunk)
      },
    })
    const source = body ? Readable.fromWeb(body as import('node:stream/web').ReadableStream) : Readable.from([])
    try {
      await pipeline(source, counter, createWriteStream(path))
    } catch (e) {
      if (e instanceof SessionError) refuse()
      throw e
    }
    return await use({ file: await openAsBlob(path, { type }), size, sha256: hash.digest('hex') })
  } finally {
    await rm(spool, { recursive: true, force: true })
  }
}

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
  const { store, tenancy, usage } = service
  /** Runs a write of `bytes` attachment bytes within the caller's byte quota (403 past it). */
  const withinQuota = async <T>(principal: string | undefined, bytes: number, write: () => Promise<T>): Promise<T> => {
    const release = usage ? await usage.admit(principal ?? '', bytes) : () => {}
    try {
      return await write()
    } finally {
      release()
    }
  }
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
    const put = await spoolBody(c, maxBytes, refuse, mime, ({ file, size }) =>
      withinQuota(c.get('principal'), size, () => store.putAttachment({ session_id, name, mime, file })))
    return c.json(put)
  })

  /**
   * Sync's upload: an attachment under its own id, with its metadata, applied with the replica
   * rules (policy push) once its bytes are here. `reuse=1` sends no bytes: it succeeds when the
   * session already holds the same content (sha256), else answers 409 and the bytes follow.
   */
  app.post('/sync/attachments/:session_id/:attachment_id', async (c) => {
    const session_id = c.req.param('session_id')
    const attachment_id = c.req.param('attachment_id')
    const refuse = (): void => void (c.env as Partial<HttpBindings> | undefined)?.incoming?.resume()
    if (!visible(c.get('principal'), session_id)) {
      refuse()
      throw notFound(session_id)
    }
    const q = (k: string): string => c.req.query(k) ?? ''
    const int = (k: string): number => {
      const v = q(k)
      if (!/^\d{1,15}$/.test(v)) throw new SessionError('session/invalid_request', `${k}: expected a non-negative integer`)
      return Number(v)
    }
    const name = q('name').trim()
    const sha256 = q('sha256')
    if (name === '') throw new SessionError('session/invalid_request', 'name must not be blank')
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new SessionError('session/invalid_request', 'sha256: expected 64 lowercase hex digits')
    const size = int('size')
    if (size > maxBytes) {
      refuse()
      throw new SessionError('session/attachment_too_large', `attachment is ${size} bytes, the limit is ${maxBytes}`)
    }
    const mime = q('mime').trim() === '' ? 'application/octet-stream' : q('mime')
    const attachment = { attachment_id, session_id, name, mime, size, sha256, created_at: int('created_at') }
    const apply = async (bytes: Blob): Promise<Response> => {
      const [result] = await withinQuota(c.get('principal'), size, () => store.applyReplica([{ type: 'attachment', session_id, attachment, bytes }], { policy: 'push' }))
      if (result.status === 'rejected') throw new SessionError(result.code, result.message)
      return c.json(result)
    }
    if (c.req.query('reuse') === '1') {
      // The same content in this session, or in another of the caller's (a fork's source).
      const principal = c.get('principal')
      const same = workOf(service).run('reuse', (meter) => findSameBytes(store, (id) => visible(principal, id), session_id, sha256, meter))
      if (!same) throw new HttpError(409, 'sync/bytes_needed', 'no attachment of yours has these bytes; send them')
      // The held bytes, read lazily: a storage copies them where they are (no byte passes here).
      const held = await store.getAttachmentBlob(same.session_id, same.attachment_id)
      if (!held) throw new HttpError(409, 'sync/bytes_needed', 'the bytes went meanwhile; send them')
      return apply(held)
    }
    return spoolBody(c, maxBytes, refuse, mime, (body) => {
      if (body.size !== size || body.sha256 !== sha256) throw new SessionError('session/invalid_request', 'the bytes do not match size and sha256')
      return apply(body.file)
    })
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
