import type { Context } from 'hono'
import type { JsonObject } from '@colloquy/core'
import type { Principal } from '../auth.js'
import { HttpError } from '../errors.js'
import type { Tenancy } from '../tenancy.js'

/**
 * What a request may reach. Every handler is handed one; there is no "absent" scope to read as
 * anything. `owner`: the sessions whose `metadata.owner` is the principal (tenancy on).
 * `all`: every session, granted explicitly: to the local user of a server run without tokens
 * (`local`), or to any authenticated principal when tenancy is turned off (`tenancy-off`).
 */
export type Scope =
  | { readonly kind: 'owner'; readonly owner: Principal }
  | { readonly kind: 'all'; readonly grant: 'local' | 'tenancy-off' }

/** Who is asking and what it may reach: what the one gate in front of every route yields. */
export interface Access {
  /** An authenticated principal, or the local user of a server run without tokens. */
  readonly who: { readonly kind: 'principal'; readonly principal: Principal } | { readonly kind: 'local' }
  readonly scope: Scope
  /** The key of the per-caller limits (request rate, open sockets). */
  readonly caller: string
}

/** Hono's variables: the gate sets `access` before any protected route runs. */
export type Env = { Variables: { access: Access } }

export const unauthorized = (): HttpError =>
  new HttpError(401, 'auth/unauthorized', 'missing or invalid credentials', { 'WWW-Authenticate': 'Bearer' })

/**
 * The request's access, as the gate set it. A route reached without the gate (registered
 * before it, or on an app without it) is refused, never served as someone: deny by default.
 */
export function accessOf(c: Context<Env>): Access {
  const access = c.get('access') as Access | undefined
  if (access === undefined) throw unauthorized()
  return access
}

/** The change-log filter of a scope: its owner's sessions, or (granted `all`) none. */
export const feedFilter = (tenancy: Tenancy, scope: Scope): JsonObject | undefined =>
  scope.kind === 'owner' ? tenancy.filter(scope.owner) : undefined

/** Whom a scope's writes are charged to: its owner, or the whole server when it reaches all sessions. */
export const quotaOwner = (scope: Scope): string => (scope.kind === 'owner' ? scope.owner : '')
