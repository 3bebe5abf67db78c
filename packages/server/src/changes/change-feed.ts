import type { JsonObject, ReplicaChange, Storage } from '@colloquy/core'
import type { StoreHost } from '@colloquy/core/host'
import type { ChangePage, CommittedChange, SequencedChange } from './change-log.js'
import { nextTurn, WORK_BUDGETS } from '../work.js'

/** A page of the log, plus what a log that can outlive or forget cursors adds. */
export interface FeedPage extends ChangePage {
  /** The log's incarnation: a client stores it with its checkpoint and sends it back. */
  readonly epoch?: string
  /**
   * The cursor cannot be served (too old, from another epoch, or ahead of the log): start over
   * from `checkpoint` 0 with a full resync (the page is empty, `more` is true).
   */
  readonly reset?: boolean
}

/**
 * What the HTTP and WebSocket surface reads: the change log. `ChangeLog` keeps it beside any
 * core `Storage` in the process; a shared database (`postgresStorage`) brings its own, read from
 * the database so that every instance sees every instance's commits.
 */
export interface ChangeFeed {
  /** The storage the engine writes through (the feed may wrap it). */
  readonly storage: Storage
  /** The newest sequence number this instance knows of. */
  readonly head: number
  /** The log's incarnation, when it has one that outlives this process. */
  readonly epoch?: string
  attach(host: StoreHost): void
  subscribe(listener: (changes: readonly CommittedChange[], head: number) => void): () => void
  page(since: number, limit: number, filter?: JsonObject, epoch?: string): Promise<EncodedPage>
  /**
   * For each change, the seq of the newest record of what it sets (its entry, meta or leaf), or
   * undefined (another kind, or nothing logged). Read after a push commits, it answers where
   * the push landed: every older record of that key is superseded.
   */
  positions(changes: readonly ReplicaChange[]): Promise<Array<number | undefined>>
}

/** A storage that keeps its own change log (several processes share it). */
export interface FeedStorage extends Storage {
  changeFeed(): ChangeFeed
}

export const hasOwnFeed = (s: Storage): s is FeedStorage =>
  typeof (s as Partial<FeedStorage>).changeFeed === 'function'

/**
 * A page's changes as they are read, each encoded to JSON once, until they hold about
 * `WORK_BUDGETS.pullChars` characters (at least one change, however large): a feed stops
 * reading its records there and ends the page at the last one kept, with `more: true`. The
 * encodings are the page's answer (`pageJson`): a page is never encoded twice, and records past
 * the budget are never turned into changes. Both feeds' pages (files, PostgreSQL) are cut by
 * this one rule.
 */
export class PageBuilder {
  readonly changes: SequencedChange[] = []
  /** `JSON.stringify(changes[i])`, for each change kept. */
  readonly encoded: string[] = []
  private chars = 0
  private sliced = 0

  /** Keeps `change` (true), or leaves it out because the page is full (false: end the page). */
  add(change: SequencedChange): boolean {
    const json = JSON.stringify(change)
    if (this.changes.length > 0 && this.chars + json.length > WORK_BUDGETS.pullChars) return false
    this.chars += json.length
    this.changes.push(change)
    this.encoded.push(json)
    return true
  }

  /**
   * Lets other requests run once a slice's worth (`WORK_BUDGETS.sliceChars`) was encoded since
   * the last turn: a feed awaits it between records, so a page never holds the event loop for
   * more than a slice. What the feed reads after it may be newer than what it read before, as a
   * page read later would have it: a record's current state is what a page sends anyway. True
   * when it let them run.
   */
  async turn(): Promise<boolean> {
    if (this.chars - this.sliced < WORK_BUDGETS.sliceChars) return false
    this.sliced = this.chars
    await nextTurn()
    return true
  }
}

/** A page as its feed built it: the changes' encodings ride along for the answer (`pageJson`). */
export type EncodedPage = FeedPage & { readonly encoded?: readonly string[] }

/**
 * The JSON of a page as pull answers it, from the encodings its feed made (the same text as
 * `JSON.stringify` of the page without `encoded`).
 */
export function pageJson(page: EncodedPage): string {
  const { changes, encoded, ...rest } = page
  if (!encoded || encoded.length !== changes.length) return JSON.stringify({ changes, ...rest })
  return `{"changes":[${encoded.join(',')}],${JSON.stringify(rest).slice(1)}`
}
