import { FUNCTION_IDS, type FunctionId, type FunctionMap, type SessionHead, type Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import {
  mentionPage,
  mentionQueryTooCostly,
  parseRequest,
  searchMentionPage,
  searchMentions,
} from '@colloquy/core/wire'
import { quotaOwner, type Scope } from './access.js'
import type { Principal } from '../auth.js'
import { HttpError } from '../errors.js'
import { notFound, type Tenancy } from '../tenancy.js'
import type { Usage } from '../usage.js'
import type { ChangeFeed } from '../changes/change-feed.js'
import { workOf, type Work } from '../work.js'
import { SEARCH_FUNCTION, type ServerSearch } from '../search/server-search.js'
import { clearOnly, isSealedMeta, refuseSealed, refuseSealedCall } from '../sealed.js'

export interface Service {
  readonly store: Store
  readonly tenancy: Tenancy
  /** Per-principal quotas; absent: none. */
  readonly usage?: Usage
  /** The change log: a push answer says where each mutation landed in it. */
  readonly changes?: Pick<ChangeFeed, 'positions'>
  /** The work budgets of scans a request starts (absent: the same budgets, unreported). */
  readonly work?: Work
  /** `session::search` (absent: the function is not found). */
  readonly search?: ServerSearch
}

/**
 * Every function `POST /rpc/:fn` answers: the store's, and the server's own. The route
 * dispatches on this list, and the route-enumeration tests read it, so a function added here is
 * tested for authentication and tenancy without anyone listing it again.
 */
export const RPC_FUNCTION_IDS: readonly string[] = Object.freeze([...FUNCTION_IDS, SEARCH_FUNCTION])

/** Functions that add to what a session stores (their body size is the estimate of how much). */
const WRITES = new Set<FunctionId>([
  'session::set-meta',
  'session::set-status',
  'session::append',
  'session::append-many',
  'session::update-message',
  'session::set-active-leaf',
  'session::set-draft',
  'session::put-attachment',
])

/**
 * The most body bytes a call of `fn` may carry before `admit` refuses it for the caller's byte
 * quota (every call but reads counts its body): `Infinity` for reads, unknown functions, or
 * without quotas. A declared length past it is refused before the body is read.
 */
export async function bodyRoom(service: Service, scope: Scope, fn: string): Promise<number> {
  if (
    !service.usage ||
    !isFunction(fn) ||
    !(WRITES.has(fn) || fn === 'session::create' || fn === 'session::ensure' || fn === 'session::fork')
  )
    return Infinity
  return service.usage.room(quotaOwner(scope))
}

/** Reserves what a call may add against the caller's quotas (403 past them), until it settles. */
async function admit(
  service: Service,
  scope: Scope,
  fn: FunctionId,
  req: { session_id?: string },
  bytes: number,
): Promise<() => void> {
  const { usage, store } = service
  if (!usage) return () => {}
  const owner = quotaOwner(scope)
  if (fn === 'session::create') return usage.admit(owner, bytes, 1)
  if (fn === 'session::ensure')
    return usage.admit(owner, bytes, (await hostOf(store).read(req.session_id ?? '')) ? 0 : 1)
  // A fork copies the path it forks: at most the whole source session.
  if (fn === 'session::fork')
    return usage.admit(owner, bytes + (await usage.bytesOf(req.session_id ?? '')), 1)
  return WRITES.has(fn) ? usage.admit(owner, bytes) : () => {}
}

/** The caller's sessions when every head is held, one owner check each (no copy of the server's list). */
function* ownMetas(store: Store, tenancy: Tenancy, principal: Principal): Generator<SessionHead['meta']> {
  for (const head of hostOf(store).heads()) if (tenancy.owns(principal, head.meta.metadata)) yield head.meta
}

const isFunction = (fn: string): fn is FunctionId => (FUNCTION_IDS as readonly string[]).includes(fn)

/** What an unknown session answers, per the contract: reads give null, delete a false, the rest not_found. */
function unknownSession(fn: FunctionId, session_id: string): unknown {
  if (fn === 'session::get' || fn === 'session::get-message' || fn === 'session::get-attachment') return null
  if (fn === 'session::delete') return { deleted: false }
  throw notFound(session_id)
}

/**
 * Runs one `session::*` function for a caller. Requests are validated by the core first (bad
 * input is rejected before any tenancy decision), then scoped: to the owner's sessions, or to
 * every session for a scope granted `all` (the local user, or tenancy off).
 */
export async function callAs(
  service: Service,
  scope: Scope,
  fn: string,
  body: unknown,
  bytes = 0,
): Promise<unknown> {
  if (fn === SEARCH_FUNCTION && service.search) return service.search.query(scope, body)
  if (!isFunction(fn)) throw new HttpError(404, 'session/invalid_request', `unknown function ${fn}`)
  const req = parseRequest(fn, body) as FunctionMap[FunctionId][0]
  const release = await admit(service, scope, fn, req as { session_id?: string }, bytes)
  try {
    return await scoped(service, scope, fn, req)
  } finally {
    release()
  }
}

async function scoped(
  service: Service,
  scope: Scope,
  fn: FunctionId,
  req: FunctionMap[FunctionId][0],
): Promise<unknown> {
  const { store, tenancy } = service
  if (fn === 'session::mention::search')
    return mentionSearch(service, scope, req as FunctionMap['session::mention::search'][0])
  if (scope.kind === 'all') {
    await refuseSealedCall(store, fn, req)
    return store.call(fn, req)
  }
  const principal = scope.owner

  switch (fn) {
    case 'session::create': {
      const r = req as FunctionMap['session::create'][0]
      return store.call(fn, { ...r, metadata: tenancy.stamp(principal, r.metadata) })
    }
    case 'session::list': {
      const r = req as FunctionMap['session::list'][0]
      const metadata = tenancy.narrow(principal, r.metadata)
      // `kinds: []` matches nothing and keeps every other check (cursor, limits) the core's.
      return store.call(fn, metadata ? { ...r, metadata } : { ...r, kinds: [] })
    }
    case 'session::ensure': {
      const r = req as FunctionMap['session::ensure'][0]
      const metadata = tenancy.stamp(principal, r.metadata)
      // Decided and reserved in one turn, after the read (another request may reserve the id
      // between turns).
      const meta = (await tenancy.metas([r.session_id])).get(r.session_id)
      const standing = tenancy.standingOf(principal, r.session_id, meta)
      if (standing === 'foreign') throw notFound(r.session_id)
      const release =
        standing === 'absent' && r.session_id !== '' ? tenancy.reserve(principal, r.session_id) : () => {}
      try {
        // Exact across instances: the head is checked again under the session's lock.
        const res = await store.call(
          fn,
          { ...r, metadata },
          {
            guard: (head) => {
              if (head && !tenancy.owns(principal, head.meta.metadata)) throw notFound(r.session_id)
            },
          },
        )
        // Belt and braces: an ensure never hands out another principal's meta.
        if (!tenancy.owns(principal, res.meta.metadata)) throw notFound(r.session_id)
        return res
      } finally {
        release()
      }
    }
    case 'session::mention::get': {
      const r = req as FunctionMap['session::mention::get'][0]
      if ((await tenancy.standing(principal, r.id)) !== 'own') return null
      await refuseSealedCall(store, fn, r)
      return store.call(fn, r)
    }
    default: {
      const r = req as { session_id: string; metadata?: FunctionMap['session::set-meta'][0]['metadata'] }
      if ((await tenancy.standing(principal, r.session_id)) !== 'own') return unknownSession(fn, r.session_id)
      await refuseSealedCall(store, fn, req)
      // The standing above is this instance's view; on a storage shared by several instances the
      // session may have been deleted and created by someone else meanwhile: checked again in
      // the commit, under the session's lock.
      const guard = {
        guard: (head: SessionHead | undefined) =>
          head && !tenancy.owns(principal, head.meta.metadata)
            ? { answer: unknownSession(fn, r.session_id) }
            : undefined,
      }
      if (fn === 'session::set-meta' && r.metadata != null)
        return store.call(fn, { ...r, metadata: tenancy.stamp(principal, r.metadata) }, guard)
      return store.call(fn, req, guard)
    }
  }
}

/**
 * `session::mention::search` in a scope: over the scope's clear sessions only (a sealed one's
 * title is ciphertext here), and refused from inside a sealed session (docs/encryption.md). With
 * every head held, all of the scope's; over a working set, its most recently updated sessions, a
 * page read as the core's own search reads one (`mentionPage`), the owner check in the read. The
 * search's work budget bounds the rest.
 */
async function mentionSearch(
  service: Service,
  scope: Scope,
  r: FunctionMap['session::mention::search'][0],
): Promise<unknown> {
  const { store, tenancy } = service
  const asking = r.context?.session_id
  if (typeof asking === 'string') await refuseSealed(store, asking, 'mention search')
  const host = hostOf(store)
  // A query the whole budget cannot prepare has its answer already: read no page for it (still
  // run on a meter, so the work it was refused is reported as every search's is).
  if (mentionQueryTooCostly(r.query))
    return workOf(service).run('mention', (meter) => searchMentions([], r, meter))
  if (host.allHeld) {
    const metas =
      scope.kind === 'all'
        ? (function* () {
            for (const head of host.heads()) yield head.meta
          })()
        : ownMetas(store, tenancy, scope.owner)
    return workOf(service).run('mention', (meter) => searchMentions(clearOnly(metas), r, meter))
  }
  const own = await host.page({
    ...mentionPage(),
    accept: (m) => !isSealedMeta(m) && (scope.kind === 'all' || tenancy.owns(scope.owner, m.metadata)),
    ...(scope.kind !== 'all' && { metadata: tenancy.filter(scope.owner) }),
  })
  return workOf(service).run('mention', (meter) =>
    searchMentionPage(
      own.map((h) => h.meta),
      r,
      meter,
    ),
  )
}
