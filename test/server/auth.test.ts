import { describe, expect, it } from 'vitest'
import { authenticator as make, bearerToken, credentialsOf } from '../../packages/server/src/auth.js'

const req = (headers: Record<string, string> = {}, query = '') =>
  new Request(`http://127.0.0.1/sync/pull${query}`, { headers })
/** The authenticator as the app calls it: cheap credentials first, the Request on demand. */
const authenticator = (options: Parameters<typeof make>[0]) => {
  const auth = make(options)
  return auth && ((r: Request) => auth(credentialsOf(r), () => r))
}

describe('authenticator', () => {
  it('is undefined when no auth is configured (an open, unscoped server)', () => {
    expect(authenticator({})).toBeUndefined()
  })

  it('maps bearer tokens to principals; one bare token is the principal "default"', async () => {
    const many = authenticator({ token: { 'tok-a': 'alice', 'tok-b': 'bob' } })!
    expect(await many(req({ authorization: 'Bearer tok-b' }))).toBe('bob')
    expect(await many(req({ authorization: 'bearer tok-a' }))).toBe('alice')
    expect(await many(req({ authorization: 'Bearer tok-c' }))).toBeUndefined()
    expect(await many(req({ authorization: 'Basic tok-a' }))).toBeUndefined()
    expect(await many(req())).toBeUndefined()
    const one = authenticator({ token: 's3cret' })!
    expect(await one(req({ authorization: 'Bearer s3cret' }))).toBe('default')
    expect(await one(req({ authorization: 'Bearer s3cret-but-longer' }))).toBeUndefined()
  })

  it('reads ?access_token= (and ?token=) on a WebSocket handshake only, and never when a header is there', async () => {
    const auth = make({ token: { t1: 'alice' } })!
    const handshake = (r: Request) => auth(credentialsOf(r, true), () => r)
    expect(bearerToken(credentialsOf(req({}, '?since=0&access_token=t1'), true))).toBe('t1')
    expect(await handshake(req({}, '?since=0&token=t1'))).toBe('alice')
    expect(await handshake(req({ authorization: 'Bearer nope' }, '?since=0&access_token=t1'))).toBeUndefined()
    // Any other request: a token in a URL is not read.
    expect(bearerToken(credentialsOf(req({}, '?since=0&access_token=t1')))).toBeUndefined()
    expect(
      await authenticator({ token: { t1: 'alice' } })!(req({}, '?since=0&access_token=t1')),
    ).toBeUndefined()
  })

  it('refuses a request that carries Authorization twice, whatever either says', async () => {
    const auth = make({ token: { t1: 'alice' }, authenticate: () => 'hooked' })!
    const twice = { authorization: () => null, query: () => undefined, handshake: false }
    expect(await auth(twice, () => req())).toBeUndefined()
    // Joined by a WHATWG Request, two headers match no token.
    expect(await auth(credentialsOf(req({ authorization: 'Bearer t1, Bearer t1' })), () => req())).toBe(
      'hooked',
    )
  })

  it('asks the authenticate hook when no token matched; empty or missing principals are refused', async () => {
    const seen: string[] = []
    const auth = authenticator({
      token: { t1: 'alice' },
      authenticate: async (r) => {
        seen.push(r.headers.get('x-user') ?? '')
        return r.headers.get('x-user') ?? null
      },
    })!
    expect(await auth(req({ authorization: 'Bearer t1', 'x-user': 'ignored' }))).toBe('alice')
    expect(await auth(req({ 'x-user': 'carol' }))).toBe('carol')
    expect(await auth(req({ 'x-user': '' }))).toBeUndefined()
    expect(await auth(req())).toBeUndefined()
    expect(seen).toStrictEqual(['carol', '', ''])
  })
})
