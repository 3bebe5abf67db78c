import { createHash } from 'node:crypto'
import { createWriteStream, openAsBlob } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { SessionError, type SessionMeta } from '@colloquy/core'
import { checkMime, mimeOrOctet } from '@colloquy/core/wire'
import { hostOf } from '@colloquy/core/host'
import type { HttpBindings } from '@hono/node-server'
import type { Context, Hono } from 'hono'
import { accessOf, quotaOwner, type Env, type Scope } from './access.js'
import { HttpError } from '../errors.js'
import { quotaExceeded } from '../usage.js'
import type { Service } from './rpc.js'
import { findSameBytes } from './same-bytes.js'
import { makeSpool } from './spools.js'
import { workOf } from '../work.js'

export interface AttachmentRoutesOptions {
  service: Service
  /** The store's `max_attachment_bytes`: an upload past it is cut off with 413. */
  maxBytes: number
}

/** `check()`'s value; when it throws, the body is first left unread (`refuse`), so the client gets the answer. */
function refusing<T>(refuse: () => void, check: () => T): T {
  try {
    return check()
  } catch (e) {
    refuse()
    throw e
  }
}

/** `refusing` for a check that awaits. */
async function refusingAsync<T>(refuse: () => void, check: () => Promise<T>): Promise<T> {
  try {
    return await check()
  } catch (e) {
    refuse()
    throw e
  }
}

const notFound = (session_id: string): SessionError =>
  new SessionError('session/not_found', `session ${session_id} not found`)

/**
 * How much of a body is read: the store's attachment limit (413 past it), and the bytes the
 * caller's quota has room for (403 past it), both known before the first byte.
 */
interface Limit {
  readonly maxBytes: number
  readonly room: number
}

const tooLargeError = (maxBytes: number, size?: number): SessionError =>
  new SessionError(
    'session/attachment_too_large',
    size === undefined
      ? `attachment exceeds the limit of ${maxBytes} bytes`
      : `attachment is ${size} bytes, the limit is ${maxBytes}`,
  )

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
async function spoolBody<T>(
  c: Context<Env>,
  limit: Limit,
  refuse: () => void,
  type: string,
  use: (body: Spooled) => Promise<T>,
): Promise<T> {
  const maxBytes = Math.min(limit.maxBytes, limit.room)
  const body = c.req.raw.body
  const spool = await makeSpool()
  try {
    const path = join(spool, 'bytes')
    let size = 0
    const hash = createHash('sha256')
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length
        if (size > maxBytes)
          return done(
            size > limit.maxBytes
              ? tooLargeError(limit.maxBytes)
              : quotaExceeded(`the upload is past the ${limit.room} bytes left of the stored-bytes quota`),
          )
        hash.update(chunk)
        done(null, chunk)
      },
    })
    const source = body
      ? Readable.fromWeb(body as import('node:stream/web').ReadableStream)
      : Readable.from([])
    try {
      await pipeline(source, counter, createWriteStream(path))
    } catch (e) {
      if (e instanceof SessionError || e instanceof HttpError) refuse()
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
  const withinQuota = async <T>(scope: Scope, bytes: number, write: () => Promise<T>): Promise<T> => {
    const release = usage ? await usage.admit(quotaOwner(scope), bytes) : () => {}
    try {
      return await write()
    } finally {
      release()
    }
  }
  /**
   * What the body may hold, decided before a byte of it is read: a declared size (the
   * `Content-Length`, or sync's `size`) past the store's limit is 413, past what the caller's
   * byte quota has room for 403, and the stream is cut off at the smaller of the two however
   * long it turns out (no Content-Length, or a false one).
   */
  const limitFor = async (scope: Scope, declared: number): Promise<Limit> => {
    if (declared > maxBytes) throw tooLargeError(maxBytes, declared)
    const room = usage ? await usage.room(quotaOwner(scope)) : Infinity
    if (declared > room)
      throw quotaExceeded(`the upload is ${declared} bytes, ${room} are left of the stored-bytes quota`)
    return { maxBytes, room }
  }
  const visible = async (scope: Scope, session_id: string): Promise<boolean> =>
    scope.kind === 'all'
      ? (await hostOf(store).read(session_id)) !== undefined
      : (await tenancy.standing(scope.owner, session_id)) === 'own'
  /** Whether a session with this meta is the caller's (for scans over sessions already read). */
  const owns = (scope: Scope, meta: SessionMeta): boolean =>
    scope.kind === 'all' || tenancy.owns(scope.owner, meta.metadata)

  app.post('/attachments/:session_id', async (c) => {
    const session_id = c.req.param('session_id')
    const name = c.req.query('name') ?? ''
    const given = c.req.query('mime') ?? c.req.header('content-type') ?? ''
    // On a refusal the rest of the body is drained unread, so the client gets the answer.
    const refuse = (): void => void (c.env as Partial<HttpBindings> | undefined)?.incoming?.resume()
    // Checked before a byte is read: nothing is spooled for someone else's (or no) session.
    if (name.trim() === '') {
      refuse()
      throw new SessionError('session/invalid_request', 'name must not be blank')
    }
    const mime = given.trim() === '' ? '' : refusing(refuse, () => checkMime(given, 'mime'))
    if (!(await visible(accessOf(c).scope, session_id))) {
      refuse()
      throw notFound(session_id)
    }
    const declared = Number(c.req.header('content-length'))
    const limit = await refusingAsync(refuse, () =>
      limitFor(accessOf(c).scope, Number.isSafeInteger(declared) ? declared : 0),
    )
    const put = await spoolBody(c, limit, refuse, mime, ({ file, size }) =>
      withinQuota(accessOf(c).scope, size, () => store.putAttachment({ session_id, name, mime, file })),
    )
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
    if (!(await visible(accessOf(c).scope, session_id))) {
      refuse()
      throw notFound(session_id)
    }
    const q = (k: string): string => c.req.query(k) ?? ''
    const int = (k: string): number => {
      const v = q(k)
      if (!/^\d{1,15}$/.test(v))
        throw new SessionError('session/invalid_request', `${k}: expected a non-negative integer`)
      return Number(v)
    }
    const { name, sha256, size, created_at, mime, box } = refusing(refuse, () => {
      const name = q('name').trim()
      const sha256 = q('sha256')
      // A sealed attachment's name and type are in its box (checked by the core's validator).
      const box = q('box')
      if (name === '' && box === '')
        throw new SessionError('session/invalid_request', 'name must not be blank')
      if (!/^[0-9a-f]{64}$/.test(sha256))
        throw new SessionError('session/invalid_request', 'sha256: expected 64 lowercase hex digits')
      const size = int('size')
      // Checked here, before a byte is read, by the rule `applyReplica` applies again.
      const mime = q('mime').trim() === '' ? 'application/octet-stream' : checkMime(q('mime'), 'mime')
      return { name, sha256, size, created_at: int('created_at'), mime, box }
    })
    const declared = Number(c.req.header('content-length'))
    const limit = await refusingAsync(refuse, () =>
      limitFor(accessOf(c).scope, Math.max(size, Number.isSafeInteger(declared) ? declared : 0)),
    )
    const attachment = {
      attachment_id,
      session_id,
      name,
      mime,
      size,
      sha256,
      created_at,
      ...(box !== '' && { box }),
    }
    const apply = async (bytes: Blob): Promise<Response> => {
      const [result] = await withinQuota(accessOf(c).scope, size, () =>
        store.applyReplica([{ type: 'attachment', session_id, attachment, bytes }], { policy: 'push' }),
      )
      if (result.status === 'rejected') throw new SessionError(result.code, result.message)
      return c.json(result)
    }
    if (c.req.query('reuse') === '1') {
      // The same content in this session, or in another of the caller's (a fork's source).
      const scope = accessOf(c).scope
      const same = await workOf(service).run('reuse', (meter) =>
        findSameBytes(
          store,
          (meta) => owns(scope, meta),
          scope.kind === 'all' ? undefined : tenancy.filter(scope.owner),
          session_id,
          sha256,
          meter,
        ),
      )
      if (!same)
        throw new HttpError(409, 'sync/bytes_needed', 'no attachment of yours has these bytes; send them')
      // The held bytes, read lazily: a storage copies them where they are (no byte passes here).
      const held = await store.getAttachmentBlob(same.session_id, same.attachment_id)
      if (!held) throw new HttpError(409, 'sync/bytes_needed', 'the bytes went meanwhile; send them')
      return apply(held)
    }
    return spoolBody(c, limit, refuse, mime, (body) => {
      if (body.size !== size || body.sha256 !== sha256)
        throw new SessionError('session/invalid_request', 'the bytes do not match size and sha256')
      return apply(body.file)
    })
  })

  app.get('/attachments/:session_id/:attachment_id', async (c) => {
    const session_id = c.req.param('session_id')
    const attachment_id = c.req.param('attachment_id')
    const meta = (await visible(accessOf(c).scope, session_id))
      ? await store.getAttachment({ session_id, attachment_id, include_data: false })
      : null
    const blob = meta && (await store.getAttachmentBlob(session_id, attachment_id))
    if (!meta || !blob)
      throw new HttpError(
        404,
        'session/not_found',
        `attachment ${attachment_id} of session ${session_id} not found`,
      )
    return new Response(blob.stream(), {
      headers: {
        // A type stored before the mime rule (a CR or LF would split the header) is served as bytes.
        'Content-Type': mimeOrOctet(meta.attachment.mime),
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
