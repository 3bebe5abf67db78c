// What the engine knows of an operation: how to run it on a batch's overlay, and what it needs.
// The operations themselves are in `ops/` (their table: `ops/index.ts`), handed to the batch
// runner by the store: the engine never imports them.
import type { OpContext } from '../model/context.js'
import type { FunctionId, FunctionMap } from '../model/model.js'
import type { Overlay } from './overlay.js'

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
   * Present until the operation's code is here: fetches it (a chunk of its own for bundlers). The
   * store awaits it before the first call; a failed fetch is tried again on the next call.
   */
  load?: () => Promise<void>
}

/** Every operation, by function id. */
export type OperationTable = { readonly [K in FunctionId]: OperationSpec<K> }
