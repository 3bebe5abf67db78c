// What the engine knows of an operation: how to run it on a batch's overlay, and what it needs.
// The operations themselves are in `ops/` (their table: `ops/index.ts`), handed to the batch
// runner by the store: the engine never imports them.
import type { OpContext } from '../model/context.js'
import type { FunctionId, FunctionMap, SessionEntry } from '../model/model.js'
import type { Overlay } from './overlay.js'
import type { PageQuery } from '../storage/seam.js'

export interface OperationSpec<K extends FunctionId> {
  /** The operation, once its code is here (see `load`); the store runs no call before that. */
  run?: (d: Overlay, req: FunctionMap[K][0], ctx: OpContext) => FunctionMap[K][1]
  /**
   * Reads take no transaction; they still run in issue order with the writes around them that
   * may touch their session (a read of one session need not wait for other sessions' commits).
   */
  write: boolean
  /** Whether the operation needs the session's entries in memory. */
  entries: boolean
  /**
   * Whether the operation reads many sessions (a list, a mention search). Over a storage with
   * paged reads, the batch first reads the sessions `page` asks for and the operation sees
   * those (`Overlay.listed`) instead of the heads in memory.
   */
  pages?: boolean
  /**
   * The page of sessions the operation needs, once its code is here: `spare` more than it
   * shows, for the sessions the batch's own writes may push out of it. Throws for a bad request.
   */
  page?: (req: FunctionMap[K][0], ctx: OpContext, spare: number) => PageQuery
  /**
   * For an operation that reads the content of some entries of its session, not all (a read of
   * a page; a write such as an edit, or an append that reads none): those entries, found from
   * the clear fields alone (ids, parents, kinds, roles) and from the content of the entries
   * already opened. An encrypted store opens those before it runs (see `model/sealed-entry.ts`);
   * without it, every entry of the session is opened. Errors are left to `run`, which throws
   * them again.
   */
  reads?: (d: Overlay, req: FunctionMap[K][0], ctx: OpContext) => Iterable<SessionEntry>
  /**
   * Whether `reads` may name more once what it named is opened (it decides from content:
   * `messagesTail` finds a tool run's bounds so): it is asked again, a few turns, while it names
   * entries still sealed; a call that then meets one has its session opened whole.
   */
  readsMore?: boolean
  /**
   * Present until the operation's code is here: fetches it (a chunk of its own for bundlers). The
   * store awaits it before the first call; a failed fetch is tried again on the next call.
   */
  load?: () => Promise<void>
}

/** Every operation, by function id. */
export type OperationTable = { readonly [K in FunctionId]: OperationSpec<K> }
