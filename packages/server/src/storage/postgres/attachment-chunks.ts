import { createHash } from 'node:crypto'
import type { AttachmentMeta, BlobWrite, SessionHead, WriteSet } from '@colloquy/core'
import type pg from 'pg'
import { toDb } from './codec.js'

/**
 * Attachment bytes in PostgreSQL: `colloquy_attachment_chunks (session_id, sha256, n, data)`,
 * fixed-size `bytea` chunks. Rows rather than large objects: they are ordinary rows of the
 * session (deleted by the same `DELETE` as its entries, in the same transaction; no orphaned
 * large object needing `vacuumlo`; dumped, replicated and scoped like every other table), and a
 * chunk is the unit of streaming: an upload is written chunk by chunk from its stream, a download
 * read one chunk per query, so neither ever holds a whole attachment.
 */
export const CHUNK_BYTES = 256 * 1024

type Db = pg.ClientBase | pg.Pool

/**
 * The bytes of one stored attachment, read lazily: nothing is fetched until the Blob is read,
 * and then one chunk at a time (`stream()`), each by its own query. A Blob because that is what
 * the storage seam hands out; the storage recognises its own and copies them inside the
 * database (the sync upload's `reuse`) instead of streaming them through the process. Every
 * way to read a Blob is overridden (its native contents are empty): it must not be handed to
 * code that reads a Blob's internals (`new Blob([it])`, `structuredClone`), which the server
 * never does.
 */
export class StoredBytes extends Blob {
  // Private fields, not properties: a Blob is walked as a value by the core's input checks.
  readonly #db: Db
  readonly #mime: string
  readonly #start: number
  readonly #end: number

  constructor(
    db: Db,
    readonly session_id: string,
    readonly sha256: string,
    mime: string,
    start: number,
    end: number,
  ) {
    super([], { type: mime })
    this.#db = db
    this.#mime = mime
    this.#start = start
    this.#end = end
  }

  override get size(): number {
    return this.#end - this.#start
  }

  override get type(): string {
    return this.#mime
  }

  override slice(start = 0, end = this.size, type = this.#mime): Blob {
    const clamp = (v: number): number => Math.min(Math.max(v < 0 ? this.size + v : v, 0), this.size)
    const from = clamp(start)
    return new StoredBytes(
      this.#db,
      this.session_id,
      this.sha256,
      type,
      this.#start + from,
      this.#start + Math.max(from, clamp(end)),
    )
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    let at = this.#start
    return new ReadableStream<Uint8Array<ArrayBuffer>>(
      {
        pull: async (controller) => {
          if (at >= this.#end) return controller.close()
          const n = Math.floor(at / CHUNK_BYTES)
          const row = (
            await this.#db.query<{ data: Buffer }>(
              'SELECT data FROM colloquy_attachment_chunks WHERE session_id = $1 AND sha256 = $2 AND n = $3',
              [toDb(this.session_id), this.sha256, n],
            )
          ).rows[0]
          // Deleted while it was read (its session or the attachment went meanwhile).
          if (!row)
            return controller.error(
              new Error(`attachment bytes ${this.sha256} of ${this.session_id} are gone`),
            )
          const from = at - n * CHUNK_BYTES
          const to = Math.min(row.data.length, this.#end - n * CHUNK_BYTES)
          if (to <= from)
            return controller.error(
              new Error(`attachment bytes ${this.sha256} of ${this.session_id} are shorter than listed`),
            )
          controller.enqueue(
            new Uint8Array(row.data.buffer as ArrayBuffer, row.data.byteOffset + from, to - from),
          )
          at += to - from
        },
      },
      { highWaterMark: 1 },
    )
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const out = new Uint8Array(new ArrayBuffer(this.size))
    let o = 0
    for await (const part of this.stream() as unknown as AsyncIterable<Uint8Array>) {
      out.set(part, o)
      o += part.length
    }
    return out.buffer
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.arrayBuffer())
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer())
  }
}

/** Writes `blob` as the chunks of (`session_id`, `sha256`), chunk by chunk as it streams in. */
async function writeChunks(
  client: pg.ClientBase,
  session_id: string,
  a: AttachmentMeta,
  blob: Blob,
): Promise<void> {
  const hash = createHash('sha256')
  let pending: Buffer[] = []
  let held = 0
  let n = 0
  let total = 0
  const flush = async (upto: number): Promise<void> => {
    const all = pending.length === 1 ? pending[0] : Buffer.concat(pending, held)
    await client.query(
      'INSERT INTO colloquy_attachment_chunks (session_id, sha256, n, data) VALUES ($1, $2, $3, $4)',
      [toDb(session_id), a.sha256, n++, all.subarray(0, upto)],
    )
    pending = upto < all.length ? [all.subarray(upto)] : []
    held = all.length - upto
  }
  for await (const part of blob.stream() as unknown as AsyncIterable<Uint8Array>) {
    const buf = Buffer.from(part.buffer, part.byteOffset, part.length)
    hash.update(buf)
    total += buf.length
    pending.push(buf)
    held += buf.length
    while (held >= CHUNK_BYTES) await flush(CHUNK_BYTES)
  }
  if (held > 0) await flush(held)
  // The listed size and hash were taken from these bytes: a Blob that changed since (a file
  // rewritten under it) must not be stored under them.
  if (total !== a.size || hash.digest('hex') !== a.sha256)
    throw new Error(`attachment ${a.attachment_id}: the bytes changed while they were stored`)
}

/** Copies the chunks another session holds for `sha256` (a fork, or a sync upload's `reuse`). */
async function copyChunks(
  client: pg.ClientBase,
  session_id: string,
  from_session_id: string,
  a: AttachmentMeta,
): Promise<void> {
  const r = await client.query(
    `INSERT INTO colloquy_attachment_chunks (session_id, sha256, n, data)
     SELECT $1, sha256, n, data FROM colloquy_attachment_chunks WHERE session_id = $2 AND sha256 = $3
     ON CONFLICT DO NOTHING`,
    [toDb(session_id), toDb(from_session_id), a.sha256],
  )
  if (a.size > 0 && !r.rowCount)
    throw new Error(`attachment ${a.attachment_id}: session ${from_session_id} holds no bytes to copy`)
}

const blobFor = (ws: WriteSet, session_id: string, attachment_id: string): BlobWrite | undefined =>
  ws.blobs?.find((b) => b.op !== 'delete' && b.session_id === session_id && b.attachment_id === attachment_id)

/**
 * The bytes one commit adds and removes, inside its transaction (after deleted sessions' rows
 * are gone): an attachment new to its session's list brings its bytes unless the session holds
 * the same content already; content no attachment of the session lists any more is removed.
 * So bytes exist exactly while a committed list names them: a commit that fails leaves none.
 */
export async function writeAttachmentBytes(
  client: pg.ClientBase,
  ws: WriteSet,
  before: (id: string) => SessionHead | undefined,
): Promise<void> {
  for (const [session_id, head] of ws.heads) {
    const list = head.attachments ?? []
    const prev = before(session_id)?.attachments ?? []
    if (!list.length && !prev.length) continue
    const stored = new Set(prev.map((a) => a.sha256))
    for (const a of list) {
      if (stored.has(a.sha256)) continue
      stored.add(a.sha256)
      const write = blobFor(ws, session_id, a.attachment_id)
      if (
        write?.op === 'put' &&
        write.bytes instanceof StoredBytes &&
        write.bytes.sha256 === a.sha256 &&
        write.bytes.size === a.size
      ) {
        // Bytes this database holds already (another session of the caller's): copied in place.
        await copyChunks(client, session_id, write.bytes.session_id, a)
      } else if (write?.op === 'put') {
        await writeChunks(client, session_id, a, write.bytes)
      } else if (write?.op === 'copy') {
        await copyChunks(client, session_id, write.from_session_id, a)
      } else {
        throw new Error(`attachment ${a.attachment_id} of ${session_id} has no bytes to write`)
      }
    }
    const listed = new Set(list.map((a) => a.sha256))
    const unlisted = [...new Set(prev.map((a) => a.sha256))].filter((sha) => !listed.has(sha))
    if (unlisted.length)
      await client.query(
        'DELETE FROM colloquy_attachment_chunks WHERE session_id = $1 AND sha256 = ANY($2)',
        [toDb(session_id), unlisted],
      )
  }
}

/** The bytes of one listed attachment of a session, read lazily, or undefined. */
export async function storedBytes(
  db: Db,
  session_id: string,
  attachment_id: string,
): Promise<Blob | undefined> {
  const r = (
    await db.query<{ attachments: AttachmentMeta[] | null }>(
      'SELECT attachments FROM colloquy_sessions WHERE id = $1',
      [toDb(session_id)],
    )
  ).rows[0]
  const a = r?.attachments?.find((x) => x.attachment_id === attachment_id)
  return a && new StoredBytes(db, session_id, a.sha256, a.mime, 0, a.size)
}
