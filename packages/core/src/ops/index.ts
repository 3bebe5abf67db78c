import type { FunctionId } from '../model/model.js'
import { once, type Once } from '../util/once.js'
import type { PreparedAttachment } from './attachments.js'
import type { OperationSpec, OperationTable } from '../engine/operation.js'

type Run<K extends FunctionId> = NonNullable<OperationSpec<K>['run']>

const w = true
const r = false

/**
 * An operation fetched on first use (export `name` of its module): every one, `append` and
 * `updateMessage` included, so that an app's first screen loads none of the code that writes.
 */
function later<K extends FunctionId>(
  write: boolean,
  entries: boolean,
  code: Once<object>,
  name: string,
  /** The export that says which page of sessions the operation reads (see `OperationSpec.page`). */
  page?: string,
  /** The export that says which entries the operation reads (see `OperationSpec.reads`). */
  reads?: string,
  /** `reads` is asked again once what it named is opened (see `OperationSpec.readsMore`). */
  readsMore?: boolean,
): OperationSpec<K> {
  const spec: OperationSpec<K> = {
    write,
    entries,
    ...(page && { pages: true }),
    ...(readsMore && { readsMore }),
    load: () =>
      Promise.resolve(code.load()).then(() => {
        const m = code.value as Record<string, unknown>
        spec.run = m[name] as Run<K>
        if (page) spec.page = m[page] as OperationSpec<K>['page']
        if (reads) spec.reads = m[reads] as OperationSpec<K>['reads']
        spec.load = undefined
      }),
  }
  return spec
}

// Literal specifiers, so that bundlers see each module and give it its chunk.
const meta = once(() => import('./meta.js'))
const reads = once(() => import('./reads.js'))
const attachments = once(() => import('./attachments.js'))
const tail = once(() => import('./tail.js'))
const mention = once(() => import('./mention.js'))
const create = once(() => import('./create.js'))
const entries = once(() => import('./entries.js'))

/** The domain service: one implementation of every rule, whatever the storage or transport. */
export const operations: OperationTable = {
  'session::create': later(w, false, create, 'create'),
  'session::ensure': later(w, false, create, 'ensure'),
  'session::get': later(r, false, reads, 'get'),
  'session::list': later(r, false, reads, 'list', 'listPage'),
  'session::delete': later(w, false, meta, 'remove'),
  'session::set-meta': later(w, false, meta, 'setMeta'),
  'session::set-status': later(w, false, meta, 'setStatus'),
  // Writes say which entries' content they read, as reads do (an encrypted store opens only those).
  'session::append': later(w, true, entries, 'append', undefined, 'readsNoContent'),
  'session::append-many': later(
    w,
    true,
    once(() => import('./append-many.js')),
    'appendMany',
    undefined,
    'readsNoContent',
  ),
  'session::get-message': later(r, true, reads, 'getMessage', undefined, 'getMessageReads'),
  'session::messages': later(r, true, reads, 'messages', undefined, 'messagesReads'),
  'session::update-message': later(w, true, entries, 'updateMessage', undefined, 'updateMessageReads'),
  'session::set-active-leaf': later(
    w,
    true,
    once(() => import('./active-leaf.js')),
    'setActiveLeaf',
    undefined,
    'readsNoContent',
  ),
  'session::fork': later(
    w,
    true,
    once(() => import('./fork.js')),
    'fork',
    undefined,
    'forkReads',
  ),
  'session::set-draft': later(w, false, attachments, 'setDraft'),
  // The store hands this one a prepared request (bytes checked and hashed before the batch).
  'session::put-attachment': later(w, false, attachments, 'putAttachment'),
  'session::get-attachment': later(r, false, attachments, 'getAttachment'),
  'session::list-attachments': later(r, false, attachments, 'listAttachments'),
  // The in-use refusal scans every branch's entries for references, which a sealed entry
  // holds clear (`attachment_ids`): it opens nothing.
  'session::delete-attachment': later(w, true, attachments, 'deleteAttachment', undefined, 'readsNoContent'),
  'session::messages-tail': later(r, true, tail, 'messagesTail', undefined, 'messagesTailReads', true),
  'session::messages-range': later(r, true, tail, 'messagesRange', undefined, 'messagesRangeReads'),
  'session::mention::search': later(r, false, mention, 'mentionSearch', 'mentionPage'),
  'session::mention::get': later(r, false, mention, 'mentionGet'),
}

export type { PreparedAttachment }
