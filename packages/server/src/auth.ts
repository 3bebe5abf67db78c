import * as crypto from 'node:crypto'

/** Who a request acts for. With tenancy on, sessions belong to `metadata.owner === principal`. */
export type Principal = string

export type Authenticate = (
  request: Request,
) => Principal | null | undefined | Promise<Principal | null | undefined>

export interface AuthOptions {
  /**
   * Bearer tokens: one token (principal `"default"`), or a map token → principal. Sent as
   * `Authorization: Bearer <token>`; on a WebSocket handshake only, also as `?access_token=`
   * (alias `?token=`), since browsers cannot set headers there.
   */
  token?: string | Readonly<Record<string, Principal>>
  /** A custom check; returns the principal, or null/undefined for 401. Runs when no token matched. */
  authenticate?: Authenticate
}

// One-shot `crypto.hash` (Node 20.12+) costs a fraction of a Hash object per request.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash
const digest = (s: string): string =>
  oneShot ? oneShot('sha256', s, 'base64') : crypto.createHash('sha256').update(s).digest('base64')

/** What token auth reads from a request. */
export interface Credentials {
  /** The Authorization header; null when the request carried it more than once (ambiguous: refused). */
  authorization(): string | null | undefined
  query(name: string): string | undefined
  /**
   * A WebSocket handshake: the only request whose token may travel in the query string
   * (browsers cannot set headers on a WebSocket). Anywhere else a token in a URL would end up in
   * logs, histories and Referer headers, and is not read.
   */
  readonly handshake: boolean
}

/** The bearer token: the Authorization header's when there is one, else on a handshake `?access_token=` (alias `?token=`). */
export function bearerToken(request: Credentials): string | undefined {
  const header = request.authorization()
  if (header === null) return undefined
  if (header !== undefined) return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]
  return request.handshake ? (request.query('access_token') ?? request.query('token')) : undefined
}

/** Credentials of a WHATWG Request (its repeated headers come joined, which no token matches). */
export const credentialsOf = (request: Request, handshake = false): Credentials => ({
  authorization: () => request.headers.get('authorization') ?? undefined,
  query: (name) => new URL(request.url).searchParams.get(name) ?? undefined,
  handshake,
})

/**
 * The request authenticator, or undefined when no auth is configured (the server then grants
 * the local user, explicitly: see `Access`).
 * Tokens are checked on the cheap credentials; the hook gets the full Request, built only then.
 */
export function authenticator(
  options: AuthOptions,
): ((credentials: Credentials, request: () => Request) => Promise<Principal | undefined>) | undefined {
  const tokens = typeof options.token === 'string' ? { [options.token]: 'default' } : (options.token ?? {})
  // Tokens are looked up by their SHA-256 digest, so neither content nor length leaks through
  // timing: what a lookup's time could tell is how a digest the caller chose compares with a
  // stored one, which says nothing about the token behind it. One lookup, however many tokens
  // (a tokens file of many users must not cost every request a comparison per user).
  const known = new Map(Object.entries(tokens).map(([token, principal]) => [digest(token), principal]))
  const hook = options.authenticate
  if (!known.size && !hook) return undefined
  return async (credentials, request) => {
    // Two Authorization headers are refused outright, whatever either says.
    if (credentials.authorization() === null) return undefined
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
