import { SessionError, type FunctionId, type SessionMeta, type Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { isSealedRecord } from '@colloquy/core/wire'

// End-to-end encrypted sessions (docs/encryption.md): the server holds their records sealed,
// validates, orders, reconciles and relays them like any other, and never reads inside them.
// A feature that needs what people wrote in clear (a transcript, search, mentions, writing a
// message for a caller) cannot serve such a session: it answers with this error, which says
// why, rather than an empty or wrong answer. Every such feature checks here.

/** Whether a session's meta is sealed (its title is a sealed field, not text). */
export const isSealedMeta = (meta: SessionMeta): boolean => isSealedRecord(meta)

/** The refusal, for a session whose content the server cannot read. */
export const sealedSession = (session_id: string, what: string): SessionError =>
  new SessionError(
    'session/invalid_request',
    `session ${session_id} is end-to-end encrypted: the server holds only ciphertext, so ${what} cannot be served here (read it on a device that holds the key)`,
  )

/**
 * Functions that read or write what people wrote, hence refused for a sealed session. The rest
 * (get, list, ensure, delete, status, active leaf, attachment listing and deletion) read or change
 * only what a sealed session keeps clear.
 */
const NEEDS_PLAINTEXT: ReadonlySet<FunctionId> = new Set<FunctionId>([
  'session::set-meta',
  'session::append',
  'session::append-many',
  'session::get-message',
  'session::messages',
  'session::update-message',
  'session::fork',
  'session::set-draft',
  'session::put-attachment',
  'session::messages-tail',
  'session::messages-range',
  'session::mention::get',
])

/**
 * Refuses `what` for a sealed session (after the caller's own access check, or with `visible`
 * saying whether the caller may know of it).
 */
export async function refuseSealed(
  store: Store,
  session_id: string,
  what: string,
  visible: (meta: SessionMeta) => boolean = () => true,
): Promise<void> {
  // `read`: the head whether the working set holds it or not.
  const meta = (await hostOf(store).read(session_id))?.meta
  if (meta && isSealedMeta(meta) && visible(meta)) throw sealedSession(session_id, what)
}

/** Refuses a call of `fn` (request `req`, validated) on a sealed session. */
export async function refuseSealedCall(store: Store, fn: FunctionId, req: unknown): Promise<void> {
  if (!NEEDS_PLAINTEXT.has(fn)) return
  const r = req as { session_id?: unknown; id?: unknown }
  const session_id = fn === 'session::mention::get' ? r.id : r.session_id
  if (typeof session_id === 'string')
    await refuseSealed(store, session_id, fn === 'session::messages' ? 'its messages' : `\`${fn}\``)
}

/** The clear sessions among `metas`: what a search over text may look at. */
export function* clearOnly(metas: Iterable<SessionMeta>): Generator<SessionMeta> {
  for (const m of metas) if (!isSealedMeta(m)) yield m
}
