import type {
  AttachmentMeta,
  EventEnvelope,
  EventMap,
  JsonObject,
  SessionEntry,
  SessionMeta,
  TriggerType,
} from '../model/model.js'
import type { State } from './state.js'
import type { BlobWrite, SessionHead, SideWrite, WriteSet } from '../storage/seam.js'

/**
 * The writes of one batch, layered over the committed state. Operations read through it (so
 * each sees the ones before it) and write into it; on commit it is folded into the state, on a
 * failed commit it is dropped, which is what keeps memory equal to disk.
 */
export class Overlay {
  readonly heads = new Map<string, SessionHead>()
  readonly deleted = new Set<string>()
  readonly entries = new Map<string, Map<string, SessionEntry>>()
  readonly events: EventEnvelope[] = []
  /** Records for side stores written with this batch (sync checkpoints). */
  readonly side: SideWrite[] = []
  /** Attachment bytes written with this batch. */
  readonly blobs: BlobWrite[] = []
  /**
   * The sessions the operation running now reads instead of those in memory, as a storage with
   * paged reads returned them before the batch (see `OperationSpec.page`); this batch's writes
   * are laid over them (`metas`).
   */
  listed?: readonly SessionMeta[]
  /** Sessions whose entries are already durable (bulk import): for commit hooks; not kept in memory. */
  readonly preloaded = new Map<string, readonly SessionEntry[]>()

  /**
   * `base`: the previous batch's overlay while its commit is still pending (pipelined commits);
   * reads fall through to it before the committed state. Dropped once that batch is folded in.
   */
  constructor(
    readonly state: State,
    public base?: Overlay,
  ) {}

  head(session_id: string): SessionHead | undefined {
    const own = this.heads.get(session_id)
    if (own || this.deleted.has(session_id)) return own
    return this.base ? this.base.head(session_id) : this.state.sessions.get(session_id)?.head
  }

  meta(session_id: string): SessionMeta | undefined {
    return this.head(session_id)?.meta
  }

  entry(session_id: string, entry_id: string): SessionEntry | undefined {
    const own = this.entries.get(session_id)?.get(entry_id)
    if (own || this.deleted.has(session_id)) return own
    return this.base
      ? this.base.entry(session_id, entry_id)
      : this.state.sessions.get(session_id)?.entries?.get(entry_id)
  }

  /** Writes a head; the session's attachment list is kept unless one is given. */
  putHead(
    meta: SessionMeta,
    leaf: string | null,
    attachments: readonly AttachmentMeta[] | undefined = this.head(meta.session_id)?.attachments,
  ): void {
    const id = meta.session_id
    const base =
      this.heads.get(id)?.v ?? (this.base ? this.base.head(id)?.v : this.state.sessions.get(id)?.head.v) ?? 0
    // One version step per batch, however many operations touched the session.
    const v = this.heads.has(id) ? base : base + 1
    const head: SessionHead = attachments?.length
      ? { meta: Object.freeze(meta), leaf, v, attachments: Object.freeze(attachments) }
      : { meta: Object.freeze(meta), leaf, v }
    this.heads.set(id, Object.freeze(head))
  }

  /** Told of every entry written (a batch streaming its entries to the storage, see `StorageReader.stream`). */
  onEntry?: (session_id: string, entry: SessionEntry) => void

  putEntry(session_id: string, entry: SessionEntry): void {
    let map = this.entries.get(session_id)
    if (!map) this.entries.set(session_id, (map = new Map()))
    map.set(entry.id, Object.freeze(entry))
    this.onEntry?.(session_id, entry)
  }

  delete(session_id: string): void {
    this.deleted.add(session_id)
    this.heads.delete(session_id)
    this.entries.delete(session_id)
  }

  emit<T extends TriggerType>(
    trigger_type: T,
    payload: EventMap[T],
    session_metadata: JsonObject | undefined,
  ): void {
    this.events.push({
      trigger_type,
      payload: Object.freeze(payload),
      session_metadata,
    } as unknown as EventEnvelope)
  }

  writeSet(side: readonly SideWrite[]): WriteSet {
    return {
      deleted: this.deleted,
      heads: this.heads,
      entries: this.entries,
      side: side.length ? [...this.side, ...side] : this.side,
      blobs: this.blobs,
      events: this.events,
    }
  }
}
