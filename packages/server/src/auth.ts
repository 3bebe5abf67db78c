import * as crypto from 'node:crypto'

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

// One-shot `crypto.hash` (Node 20.12+) costs a fraction of a Hash object per request.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash
const digest = (s: string): string => (oneShot ? oneShot('sha256', s, 'base64') : crypto.createHash('sha256').update(s).digest('base64'))

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
  // Tokens are looked up by their SHA-256 digest, so neither content nor length leaks through
  // timing: what a lookup's time could tell is how a digest the caller chose compares with a
  // stored one, which says nothing about the token behind it. One lookup, however many tokens
  // (a tokens file of many users must not cost every request a comparison per user).
  const known = new Map(Object.entries(tokens).map(([token, principal]) => [digest(token), principal]))
  const hook = options.authenticate
  if (!known.size && !hook) return undefined
  return async (credentials, request) => {
    const token = bearerToken(credentials)
    if (token !== undefined && known.size) {
      const found = known.get(digest(token))
      if (found !== undefined) return found
    }
    if (!hook) return undefined
    const principal = await hook(request())
    return typeof principal === 'string' && principal !== '' ? principal : undefined
  }
}
