import type { JsonObject, ReplicaChange, Storage } from '@colloquy/core'
import type { StoreHost } from '@colloquy/core/host'
import type { ChangePage, CommittedChange, SequencedChange } from './change-log.js'
import { WORK_BUDGETS } from '../work.js'

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
  page(since: number, limit: number, filter?: JsonObject, epoch?: string): Promise<FeedPage>
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

export const hasOwnFeed = (s: Storage): s is FeedStorage => typeof (s as Partial<FeedStorage>).changeFeed === 'function'

/**
 * How many of a page's changes fit in about `WORK_BUDGETS.pullChars` characters of JSON (at
 * least one, however large): a feed that keeps fewer than it read ends the page at the last one
 * kept, with `more: true`. Both feeds' pages (files, PostgreSQL) are cut by this one rule.
 */
export function changesWithinPageChars(changes: readonly SequencedChange[]): number {
  let chars = 0
  for (let i = 0; i < changes.length; i++) {
    chars += JSON.stringify(changes[i]!.change).length
    if (i > 0 && chars > WORK_BUDGETS.pullChars) return i
  }
  return changes.length
}
