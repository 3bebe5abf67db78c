import { FUNCTION_IDS, parseRequest, searchMentions, type FunctionId, type FunctionMap, type Store } from '@colloquy/core'
import type { Principal } from './auth.js'
import { HttpError } from './errors.js'
import { notFound, type Tenancy } from './tenancy.js'

export interface Service {
  readonly store: Store
  readonly tenancy: Tenancy
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
 * input is rejected before any tenancy decision), then scoped: `undefined` principal means an
 * unscoped server (no auth configured, or tenancy off).
 */
export async function callAs(service: Service, principal: Principal | undefined, fn: string, body: unknown): Promise<unknown> {
  if (!isFunction(fn)) throw new HttpError(404, 'session/invalid_request', `unknown function ${fn}`)
  const req = parseRequest(fn, body) as FunctionMap[FunctionId][0]
  const { store, tenancy } = service
  if (principal === undefined) return store.call(fn, req)

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
      const standing = tenancy.standing(principal, r.session_id)
      if (standing === 'foreign') throw notFound(r.session_id)
      const release = standing === 'absent' && r.session_id !== '' ? tenancy.reserve(principal, r.session_id) : () => {}
      try {
        const res = await store.call(fn, { ...r, metadata })
        // Belt and braces: an ensure never hands out another principal's meta.
        if (!tenancy.owns(principal, res.meta.metadata)) throw notFound(r.session_id)
        return res
      } finally {
        release()
      }
    }
    case 'session::mention::search': {
      // Only the caller's sessions are offered.
      const own = [...store.engine.state.sessions.values()].map((s) => s.head.meta).filter((m) => tenancy.owns(principal, m.metadata))
      return searchMentions(own, req as FunctionMap['session::mention::search'][0])
    }
    case 'session::mention::get': {
      const r = req as FunctionMap['session::mention::get'][0]
      return tenancy.standing(principal, r.id) === 'own' ? store.call(fn, r) : null
    }
    default: {
      const r = req as { session_id: string; metadata?: FunctionMap['session::set-meta'][0]['metadata'] }
      if (tenancy.standing(principal, r.session_id) !== 'own') return unknownSession(fn, r.session_id)
      if (fn === 'session::set-meta' && r.metadata != null) return store.call(fn, { ...r, metadata: tenancy.stamp(principal, r.metadata) })
      return store.call(fn, req)
    }
  }
}
