import type { Store } from '@colloquy/core'
import { checkSearchRequest, enableSearch, type Search, type SearchResult } from '@colloquy/core/search'
import type { Principal } from '../auth.js'
import type { Scope } from '../http/access.js'
import type { Tenancy } from '../tenancy.js'
import { nextTurn } from '../work.js'
import { isSealedMeta, refuseSealed } from '../sealed.js'
import type { FullTextSearch } from './postgres-search.js'
import { topQuery } from './top-query.js'

/** The RPC function id of a full-text search (a server function: the store has no such call). */
export const SEARCH_FUNCTION = 'session::search'

/** Principals whose index is kept in memory; the least recently searched is let go past it. */
const KEPT_INDEXES = 32
/**
 * Messages the kept indexes may hold between them (each counted from its sessions' heads as it
 * takes them in): past it the least recently searched are let go, the latest always kept. An
 * index's memory grows with its messages (S7, file storage: one principal's first search over
 * 1,000,000 messages took the server's RSS from 1,194 to 1,701 MiB), so a count of
 * principals alone bounds nothing: 32 principals of a million messages each would be held at once.
 */
const KEPT_MESSAGES = 2_000_000
/**
 * Documents a first pass indexes before it lets the event loop take other requests: a few
 * milliseconds, so one principal's first search (every message of theirs read) never holds
 * the server for the others.
 */
const YIELD_EVERY = 256

/** A storage that answers searches itself, from its own full text (PostgreSQL). */
export interface FullTextSource {
  readonly fullText: FullTextSearch
}

/** The storage's own full text, if it has one. */
export const fullTextOf = (storage: object): FullTextSearch | undefined =>
  'fullText' in storage ? (storage as FullTextSource).fullText : undefined

/** A principal's index, the searches it is answering, and whether it was let go. */
interface Kept {
  readonly search: Promise<Search>
  queries: number
  dropped: boolean
  readonly held: Held
}

/** What an index took in: each session's messages as its head counts them (`message_count`), and their sum (near enough to bound memory by). */
interface Held {
  readonly sessions: Map<string, number>
  messages: number
}

/** How many indexes, and of how many messages, the server keeps (see `KEPT_INDEXES`, `KEPT_MESSAGES`). */
export interface SearchBounds {
  readonly indexes?: number
  readonly messages?: number
  /** Work a query spends between turns of the event loop (default core's `SEARCH_WORK_BUDGET`; a test's is small). */
  readonly slice?: number
}

/**
 * `session::search` on the server: the core's own index (`@colloquy/core/search`, the same
 * tokenizer, ranking, snippets and work budget as on a device), one per principal, over the
 * store whatever its storage. An index holds only its principal's sessions (`include`), so no
 * hit and no term statistic crosses tenants; it is built on the principal's first search, a
 * slice at a time, then follows every commit; the least recently used are closed past
 * `KEPT_INDEXES` indexes or `KEPT_MESSAGES` messages held (a later search builds it again).
 */
export class ServerSearch {
  private readonly indexes = new Map<string, Kept>()
  private closed = false
  private readonly maxIndexes: number
  private readonly maxMessages: number
  private readonly slice: number | undefined

  constructor(
    private readonly store: Store,
    private readonly tenancy: Tenancy,
    /** The storage's own full text: when given, no index is kept here. */
    private readonly fullText?: FullTextSearch,
    bounds: SearchBounds = {},
  ) {
    this.maxIndexes = bounds.indexes ?? KEPT_INDEXES
    this.maxMessages = bounds.messages ?? KEPT_MESSAGES
    this.slice = bounds.slice
  }

  /** The indexes kept now and the messages they hold between them. */
  get held(): { indexes: number; messages: number } {
    let messages = 0
    for (const kept of this.indexes.values()) messages += kept.held.messages
    return { indexes: this.indexes.size, messages }
  }

  /**
   * Answers a search for `scope`: the request is checked whole (core's validator, the term
   * bound included) before any index is touched, so a refused request costs nothing.
   */
  async query(scope: Scope, body: unknown): Promise<SearchResult> {
    const request = checkSearchRequest(body)
    const principal = scope.kind === 'all' ? null : scope.owner
    // A search named to an end-to-end encrypted session of the caller's is refused (the server
    // holds its text sealed); another principal's session stays unknown, as everywhere.
    for (const id of request.session_ids ?? [])
      await refuseSealed(
        this.store,
        id,
        'search',
        (meta) => principal === null || this.tenancy.owns(principal, meta.metadata),
      )
    if (this.fullText) {
      if (this.closed) throw new Error('search is closed')
      return this.fullText(principal, request)
    }
    const kept = this.indexOf(principal)
    kept.queries++
    try {
      return await (await kept.search).query(request)
    } finally {
      // An index let go while it answered is closed by its last query (closing it sooner would
      // stop its catch-up half way, and the answer would miss what it had not read yet).
      if (--kept.queries === 0 && kept.dropped) this.closeIndex(kept)
      // The query took in what was committed (on a first pass, everything): it may push others out.
      if (!this.closed) this.letGo()
    }
  }

  private closeIndex(kept: Kept): void {
    void kept.search.then((s) => s.close()).catch(() => {})
  }

  private indexOf(principal: Principal | null): Kept {
    if (this.closed) throw new Error('search is closed')
    // `null`: every session (the local user, tenancy off). A principal's name never starts with ':'.
    const key = principal === null ? ':all' : `=${principal}`
    const index = this.indexes.get(key)
    if (index) {
      // Most recently used last (a Map keeps insertion order).
      this.indexes.delete(key)
      this.indexes.set(key, index)
      return index
    }
    const held: Held = { sessions: new Map(), messages: 0 }
    const search = enableSearch(this.store, {
      persist: false,
      // The principal's clear sessions (a sealed one's text is ciphertext here), counted as taken in.
      include: (head) => {
        const taken =
          !isSealedMeta(head.meta) && (principal === null || this.tenancy.owns(principal, head.meta.metadata))
        const id = head.meta.session_id
        const messages = taken ? Math.max(0, head.meta.message_count ?? 0) : 0
        held.messages += messages - (held.sessions.get(id) ?? 0)
        if (messages) held.sessions.set(id, messages)
        else held.sessions.delete(id)
        return taken
      },
      pause: nextTurn,
      yieldEvery: YIELD_EVERY,
      ...(this.slice !== undefined && { workBudget: this.slice }),
      // Words most messages hold answered whole, a slice of work at a time.
      run: topQuery(nextTurn),
    })
    const kept: Kept = { search, queries: 0, dropped: false, held }
    this.indexes.set(key, kept)
    // A failed start is not kept: the next search tries again.
    search.catch(() => this.indexes.get(key) === kept && this.indexes.delete(key))
    this.letGo()
    return kept
  }

  /**
   * Lets go of the least recently searched indexes while more are kept than `maxIndexes` or
   * they hold more messages than `maxMessages`; the most recent is always kept.
   */
  private letGo(): void {
    let messages = this.held.messages
    while (this.indexes.size > this.maxIndexes || (this.indexes.size > 1 && messages > this.maxMessages)) {
      const [oldest, dropped] = this.indexes.entries().next().value as [string, Kept]
      this.indexes.delete(oldest)
      messages -= dropped.held.messages
      dropped.dropped = true
      if (dropped.queries === 0) this.closeIndex(dropped)
    }
  }

  close(): void {
    this.closed = true
    for (const index of this.indexes.values()) this.closeIndex(index)
    this.indexes.clear()
  }
}
