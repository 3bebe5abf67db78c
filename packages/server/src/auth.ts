import { createHash, timingSafeEqual } from 'node:crypto'

/** Who a request acts for. With tenancy on, sessions belong to `metadata.owner === principal`. */
export type Principal = string

export type Authenticate = (request: Request) => Principal | null | undefined | Promise<Principal | null | undefined>

export interface AuthOptions {
  /**
   * Bearer tokens: one token (principal `"default"`), or a map token → principal. Sent as
   * `Authorization: Bearer <token>`, or as `?access_token=` (alias `?token=`) where headers
   * cannot be set (browser WebSockets).
   */
  token?: string | Readonly<Record<string, Principal>>
  /** A custom check; returns the principal, or null/undefined for 401. Runs when no token matched. */
  authenticate?: Authenticate
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest()

/** What token auth reads from a request: the Authorization header, else the query string. */
export interface Credentials {
  header(name: string): string | undefined
  query(name: string): string | undefined
}

export function bearerToken(request: Credentials): string | undefined {
  const header = request.header('authorization')
  const m = header && /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (m) return m[1]
  return request.query('access_token') ?? request.query('token')
}

/** Credentials of a WHATWG Request. */
export const credentialsOf = (request: Request): Credentials => ({
  header: (name) => request.headers.get(name) ?? undefined,
  query: (name) => new URL(request.url).searchParams.get(name) ?? undefined,
})

/**
 * The request authenticator, or undefined when no auth is configured (open, single-user mode).
 * Tokens are checked on the cheap credentials; the hook gets the full Request, built only then.
 */
export function authenticator(options: AuthOptions): ((credentials: Credentials, request: () => Request) => Promise<Principal | undefined>) | undefined {
  const tokens = typeof options.token === 'string' ? { [options.token]: 'default' } : (options.token ?? {})
  // Compared as digests in constant time, so neither content nor length leaks through timing.
  const known = Object.entries(tokens).map(([token, principal]) => ({ hash: digest(token), principal }))
  const hook = options.authenticate
  if (!known.length && !hook) return undefined
  return async (credentials, request) => {
    const token = bearerToken(credentials)
    if (token !== undefined && known.length) {
      const hash = digest(token)
      let found: Principal | undefined
      for (const k of known) if (timingSafeEqual(k.hash, hash)) found = k.principal
      if (found !== undefined) return found
    }
    if (!hook) return undefined
    const principal = await hook(request())
    return typeof principal === 'string' && principal !== '' ? principal : undefined
  }
}
