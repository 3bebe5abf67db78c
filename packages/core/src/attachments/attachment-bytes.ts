import { readBytes } from './read-bytes.js'
import { storageFailure } from '../model/storage-failure.js'
import { attachmentsOf } from '../engine/overlay-reads.js'
import { blobBytes, decodeBase64, encodeBase64, sha256Hex } from '../util/bytes.js'
import type { OpContext } from '../model/context.js'
import type { Engine } from '../engine/engine.js'
import { SessionError, invalid } from '../model/errors.js'
import type { FunctionMap } from '../model/model.js'
import type { PreparedAttachment } from '../ops/index.js'
import { checkMime, mimeOrOctet } from '../validation/mime.js'
import { isValidId } from '../validation/limits.js'

type Put = FunctionMap['session::put-attachment']
type Get = FunctionMap['session::get-attachment']

type Source = (session_id: string, attachment_id: string) => Promise<Blob | null>

/** `image.png`, `file.pdf`, …: the name of an unnamed Blob, from its mime type. */
function defaultName(mime: string): string {
  const [type, sub = ''] = mime.split(';')[0].trim().toLowerCase().split('/')
  const ext = /^[a-z0-9.+-]{1,16}$/.test(sub)
    ? `.${sub
        .replace(/^svg\+xml$/, 'svg')
        .replace(/^jpeg$/, 'jpg')
        .replace(/\+.*$/, '')}`
    : ''
  return `${type === 'image' ? 'image' : 'file'}${ext}`
}
const key = (session_id: string, attachment_id: string): string => JSON.stringify([session_id, attachment_id])

/**
 * The byte side of attachments: checking and hashing uploads before their batch, reading bytes
 * on demand after it, and object URLs for display. The metadata rules live in the operations.
 */
export class AttachmentBytes {
  private readonly urls = new Map<string, { url: Promise<string | null>; holders: number }>()
  private readonly fetching = new Map<string, Promise<Blob | undefined>>()

  constructor(
    private readonly engine: Engine,
    private readonly ctx: OpContext,
    /** Where bytes this store lacks come from (the store's `setAttachmentSource`), if anywhere. */
    private readonly source: () => Source | undefined,
  ) {}

  /** Queues `fn` with the store's calls (the engine settles the promise). */
  private submit<K extends 'session::put-attachment' | 'session::get-attachment'>(
    fn: K,
    req: FunctionMap[K][0],
  ): Promise<FunctionMap[K][1]> {
    return new Promise((resolve, reject) => this.engine.enqueue(fn, req, undefined, resolve, reject))
  }

  /** The contract's order: name, then base64, then size; the session is checked in the batch. */
  async put(req: Put[0]): Promise<Put[1]> {
    if (!this.engine.storage.attachmentBytes)
      throw new SessionError(
        'session/storage',
        `storage ${this.engine.storage.name} keeps no attachment bytes`,
      )
    const file = req.file ?? undefined
    const fileName =
      file && typeof (file as File).name === 'string' ? (file as File).name || undefined : undefined
    // A bare Blob (a pasted image) has no name of its own: it gets one from its type. A name
    // that was given, or a File's, must not be blank.
    const name = (req.name ?? fileName ?? (file ? defaultName(req.mime ?? file.type) : '')).trim()
    if (name === '') throw invalid('name must not be blank')
    if (req.data != null && file) throw invalid('give either data (base64) or file, not both')
    let raw: Uint8Array | undefined
    let size: number
    if (req.data != null) {
      raw = decodeBase64(req.data)
      if (!raw) throw invalid('data is not valid base64')
      size = raw.length
    } else if (file) size = file.size
    else throw invalid('data: missing required field')
    const max = this.ctx.limits.max_attachment_bytes
    if (size > max)
      throw new SessionError(
        'session/attachment_too_large',
        `attachment is ${size} bytes, the limit is ${max}`,
      )
    // A type the caller gives must pass the mime rule; a File's own type (what the platform
    // guessed from its name) that does not is stored as bytes rather than refused.
    const mime =
      req.mime != null && req.mime.trim() !== '' ? checkMime(req.mime, 'mime') : mimeOrOctet(file?.type)
    // A File is read once, for its hash; the File itself is what is stored (IndexedDB copies it
    // at put time), so no second copy of the bytes is made here.
    const hashed = raw ?? (await blobBytes(file!))
    if (hashed.length !== size) throw invalid('the file changed while it was read')
    const sha256 = await sha256Hex(hashed)
    const bytes = raw ? new Blob([raw as BlobPart], { type: mime }) : file!
    readBytes.set(bytes, hashed)
    const prepared: PreparedAttachment = { session_id: req.session_id, name, mime, size, sha256, bytes }
    return this.submit('session::put-attachment', prepared as unknown as Put[0])
  }

  async get(req: Get[0]): Promise<Get[1]> {
    if (req.include_data === false) return this.submit('session::get-attachment', req)
    const found = this.submit('session::get-attachment', req)
    const blob = await this.read(found, req.session_id, req.attachment_id)
    const f = await found
    if (!f) return f
    // Deleted between the metadata read and the byte read: as unknown as it is now.
    if (!blob) return null
    return { attachment: f.attachment, data: encodeBase64(await blobBytes(blob)) }
  }

  async blob(session_id: string, attachment_id: string): Promise<Blob | null> {
    const found = this.submit('session::get-attachment', {
      session_id,
      attachment_id,
      include_data: false,
    })
    // A type stored before the mime rule is served as bytes (`application/octet-stream`).
    const type = found.then((f) => (f ? mimeOrOctet(f.attachment.mime) : undefined))
    const size = found.then((f) => f?.attachment.size)
    // A storage that makes no Blob ignores them; a failed lookup is reported through `found`.
    type.catch(() => {})
    size.catch(() => {})
    const blob = await this.read(found, session_id, attachment_id, type, size)
    const t = await type
    if (t === undefined || !blob) return null
    return blob.type === t ? blob : blob.slice(0, blob.size, t)
  }

  url(session_id: string, attachment_id: string): Promise<string | null> {
    const k = key(session_id, attachment_id)
    let held = this.urls.get(k)
    if (!held) {
      const url = this.blob(session_id, attachment_id).then((b) => (b ? URL.createObjectURL(b) : null))
      this.urls.set(k, (held = { url, holders: 0 }))
      // A failed or empty lookup is not cached: the next holder asks again.
      url.then(
        (u) => u ?? this.drop(k),
        () => this.drop(k),
      )
    }
    held.holders++
    return held.url
  }

  release(session_id: string, attachment_id: string): void {
    const k = key(session_id, attachment_id)
    const held = this.urls.get(k)
    if (!held || --held.holders > 0) return
    this.drop(k)
  }

  revokeAll(): void {
    for (const k of [...this.urls.keys()]) this.drop(k)
  }

  private drop(k: string): void {
    const held = this.urls.get(k)
    if (!held) return
    this.urls.delete(k)
    void held.url.then(
      (u) => u && URL.revokeObjectURL(u),
      () => {},
    )
  }

  /**
   * The bytes of an attachment whose metadata lookup (`found`) is under way: the storage's read
   * starts at once, beside it, rather than after it (an encrypted store opens sealed metadata
   * there, and its bytes take a read and a decryption of their own: E1). Nothing of it is
   * answered unless the lookup found the attachment; a failed read is reported only then, and
   * bytes fetched from the source only then.
   */
  private async read(
    found: Promise<Get[1]>,
    session_id: string,
    attachment_id: string,
    type?: Promise<string | undefined>,
    size?: Promise<number | undefined>,
  ): Promise<Blob | undefined> {
    const storage = this.engine.storage
    if (!storage.attachmentBytes)
      throw new SessionError('session/storage', `storage ${storage.name} keeps no attachment bytes`)
    // Started before the lookup has checked the request: only with ids the validator accepts,
    // so no input it refuses reaches the storage (the lookup then says what was wrong).
    const reading =
      isValidId(session_id) && isValidId(attachment_id)
        ? storage.attachmentBytes(session_id, attachment_id, type, size)
        : Promise.resolve(undefined)
    // Awaited below only once the lookup found the attachment.
    reading.catch(() => {})
    if (!(await found)) return undefined
    // An encrypted store's refusal (`session/integrity`, `session/locked`) keeps its code.
    const held = await reading.catch((cause: unknown) => {
      throw storageFailure(`reading attachment ${attachment_id} failed`, cause)
    })
    const source = this.source()
    if (held || !source) return held
    // Metadata without bytes (replicated): fetch them once, keep them, then answer.
    const k = key(session_id, attachment_id)
    let p = this.fetching.get(k)
    if (!p) {
      p = this.fetchAndKeep(session_id, attachment_id, source).finally(() => this.fetching.delete(k))
      this.fetching.set(k, p)
    }
    return p
  }

  private async fetchAndKeep(
    session_id: string,
    attachment_id: string,
    source: (s: string, a: string) => Promise<Blob | null>,
  ): Promise<Blob | undefined> {
    const blob = await source(session_id, attachment_id)
    if (!blob) return undefined
    await this.engine.submitInternal(
      [session_id],
      (d) => {
        // Only while the attachment is still listed: a deleted one must not come back as bytes.
        if (attachmentsOf(d, session_id).some((a) => a.attachment_id === attachment_id))
          d.blobs.push({ op: 'put', session_id, attachment_id, bytes: blob })
      },
      'remote',
    )
    return blob
  }
}
