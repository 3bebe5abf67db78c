import { createdEnvelope } from '../engine/emit-session.js'
import type { Engine } from '../engine/engine.js'
import { SessionError, invalid } from '../model/errors.js'
import { storageFailure } from '../model/storage-failure.js'
import { ImportCheck } from './import-check.js'
import { claimImport, type ImportClaim } from './import-claim.js'
import type { ImportAttachment } from './types.js'
import { attachmentsOf } from './import-attachments.js'
import { isValidId } from '../validation/limits.js'
import type { EventEnvelope, SessionEntry, SessionMeta } from '../model/model.js'
import { parseSessionMeta } from '../validation/records.js'
import type { BlobWrite, SessionHead } from '../storage/seam.js'

export interface BeginImportOptions {
  /** Called after each transaction of entries is on disk, with the entries written so far. */
  onProgress?: (written: number) => void
  /** At most this many entries per transaction (larger appends are split); default 2000. */
  chunkSize?: number
}

/** How an incremental import ends: what only the whole input can tell (title, leaf, attachments). */
export interface ImportEnd {
  meta: SessionMeta
  active_leaf: string | null
  attachments?: readonly ImportAttachment[]
}

/**
 * A session being imported in pieces (`store.beginImport`). Entries are checked as they are
 * appended and written at once, out of sight: the session, its entries and its `created` event
 * appear only with `commit`, whole. A refused entry, a failed write or `abort` drop everything
 * written; so does the next import after a crash.
 */
export interface ImportWriter {
  readonly session_id: string
  /**
   * Checks `entries` (the one validator, ids unique) and queues their write. The promise
   * settles when they are on disk; a caller may append the next chunk before it does (parsing
   * and writing overlap) and should await it to bound what is in flight. A refused entry
   * rejects at once, and the whole import with it.
   */
  append(entries: readonly SessionEntry[]): Promise<void>
  /** Checks the tree (parents, cycles, leaf) and makes the session visible; events fire here. */
  commit(end: ImportEnd): Promise<{ session_id: string; entries: number }>
  /** Drops everything written; the writer is unusable afterwards. */
  abort(): Promise<void>
}

const storageError = (e: unknown): SessionError =>
  e instanceof SessionError ? e : storageFailure('import failed', e)

/** The entries per transaction an import writes: `chunkSize` when it is a positive integer, 2000 when unset. */
export function chunkSizeOf(options: { chunkSize?: number }): number {
  const n = options.chunkSize ?? 2000
  if (!Number.isSafeInteger(n) || n < 1) throw invalid('chunkSize: expected a positive integer')
  return n
}

/** Starts an import of `session_id`: refused when the session exists or another import holds it. */
export async function beginImport(
  engine: Engine,
  session_id: string,
  options: BeginImportOptions = {},
): Promise<ImportWriter> {
  if (!isValidId(session_id))
    throw invalid('session_id: expected an id (well-formed, at most 255 UTF-8 bytes)')
  chunkSizeOf(options)
  await engine.flush()
  await engine.ensureHead(session_id)
  if (engine.state.sessions.has(session_id)) throw invalid(`session ${session_id} already exists`)
  const claim = await claimImport(engine.storage, session_id, engine.ctx.now())
  if (!claim) throw invalid(`session ${session_id} is being imported already`)
  return new Writer(engine, session_id, claim, options)
}

class Writer implements ImportWriter {
  private readonly check = new ImportCheck()
  private readonly chunk: number
  /** The last queued write: each transaction starts when the one before it is on disk. */
  private tail: Promise<void> = Promise.resolve()
  private written = 0
  private first = true
  private failure: unknown
  private state: 'open' | 'closing' | 'done' = 'open'

  constructor(
    private readonly engine: Engine,
    readonly session_id: string,
    private readonly claim: ImportClaim,
    private readonly options: BeginImportOptions,
  ) {
    this.chunk = chunkSizeOf(options)
  }

  append(entries: readonly SessionEntry[]): Promise<void> {
    if (this.state !== 'open')
      return Promise.reject(this.failure ?? invalid(`import of ${this.session_id} is finished`))
    let checked: SessionEntry[]
    try {
      if (!Array.isArray(entries)) throw invalid('entries: expected an array')
      const base = this.check.size
      checked = entries.map((e, i) => this.check.entry(e, `entries[${base + i}]`))
    } catch (e) {
      return this.fail(e)
    }
    let last: Promise<void> = this.tail
    for (let i = 0; i < checked.length; i += this.chunk) last = this.write(checked.slice(i, i + this.chunk))
    return last
  }

  /** Queues one transaction of entries (the first also writes the import's marker). */
  private write(slice: SessionEntry[]): Promise<void> {
    const id = this.session_id
    const side = this.first ? this.claim.marker : []
    this.first = false
    const run = async (): Promise<void> => {
      if (this.failure !== undefined) throw this.failure
      await this.engine.storage.transact(async (reader) => {
        if (await reader.head(id)) throw invalid(`session ${id} already exists`)
        return {
          deleted: new Set(),
          heads: new Map(),
          entries: new Map([[id, new Map(slice.map((e) => [e.id, e]))]]),
          side,
        }
      })
      this.engine.transactions++
      this.written += slice.length
      this.options.onProgress?.(this.written)
    }
    const p = this.tail.then(run)
    // A failed write fails the import; later queued writes see `failure` and write nothing.
    this.tail = p.catch((e) => {
      this.failure ??= storageError(e)
    })
    return p.catch((e) => this.fail(e))
  }

  /** Refuses the import for good: drops what was written, rejects with the first cause. */
  private async fail(e: unknown): Promise<never> {
    this.failure ??= storageError(e)
    if (this.state === 'open') {
      this.state = 'done'
      await this.tail
      await this.claim.abandon()
    }
    throw this.failure
  }

  async commit(end: ImportEnd): Promise<{ session_id: string; entries: number }> {
    if (this.state !== 'open') throw this.failure ?? invalid(`import of ${this.session_id} is finished`)
    this.state = 'closing'
    const id = this.session_id
    const engine = this.engine
    try {
      await this.tail
      if (this.failure !== undefined) throw this.failure
      if (typeof end !== 'object' || end === null) throw invalid('import: expected { meta, active_leaf }')
      const parsed = parseSessionMeta(end.meta, 'meta')
      if (parsed.session_id !== id)
        throw invalid(`meta.session_id: expected ${id}, the session being imported`)
      const { meta, active_leaf } = this.check.finish(parsed, end.active_leaf ?? null)
      const { metas, blobs } = await attachmentsOf(engine, id, end.attachments ?? [], meta.created_at)
      // Commit hooks (the sync outbox) see every entry of the new session; read back from disk
      // only for them, so an import without hooks never holds its entries.
      const entries = engine.hooks.length ? await engine.storage.entries(id) : []
      const head = Object.freeze({
        meta,
        leaf: active_leaf,
        v: 1,
        ...(metas.length && { attachments: metas }),
      })
      await install(engine, head, entries, [createdEnvelope(meta)], blobs)
    } catch (e) {
      this.failure ??= e instanceof SessionError ? e : storageError(e)
      this.state = 'done'
      await this.claim.abandon()
      throw this.failure
    }
    this.state = 'done'
    await this.claim.finish()
    if (this.written === 0) this.options.onProgress?.(0)
    return { session_id: id, entries: this.written }
  }

  async abort(): Promise<void> {
    if (this.state !== 'open') return
    this.state = 'done'
    this.failure = invalid(`import of ${this.session_id} was aborted`)
    await this.tail
    await this.claim.abandon()
  }
}

/** Makes a session whose entries are already on disk visible: the head is written last. */
function install(
  engine: Engine,
  head: SessionHead,
  entries: readonly SessionEntry[],
  events: readonly EventEnvelope[],
  blobs: readonly BlobWrite[] = [],
): Promise<void> {
  const id = head.meta.session_id
  return engine.submitInternal([id], (d) => {
    if (d.head(id)) throw new SessionError('session/invalid_request', `session ${id} already exists`)
    d.putHead(head.meta, head.leaf, head.attachments)
    d.blobs.push(...blobs)
    d.preloaded.set(id, entries)
    d.events.push(...events)
  })
}
