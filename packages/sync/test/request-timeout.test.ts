import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { createStore, memoryStorage, SessionError } from '@colloquy/core'
import { createSync } from '../src/index.js'

// A server that takes a request and never answers (a connection gone silent: a phone changing
// networks, a proxy holding it) must not hold sync: the request fails after the transport's
// timeout, as a network error, and is asked again after a backoff.

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** A server that reads every request and answers none; `asked` lists their paths. */
async function silentServer(): Promise<{ url: string; asked: string[]; server: Server }> {
  const asked: string[] = []
  const server = createServer((req: IncomingMessage) => {
    asked.push(req.url ?? '')
    req.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, asked, server }
}

describe('a server that never answers', () => {
  it('fails the request after timeoutMs as a network error, and asks again after a backoff', async () => {
    const { url, asked, server } = await silentServer()
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, { url, timeoutMs: 300 })
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        }),
      () => store.close(),
      () => sync.close(),
    )
    await store.create({ title: 'waiting to be pushed' })
    sync.start()
    const failed = await firstValueFrom(sync.status$.pipe(filter((s) => s.state === 'error')))
    expect(failed.error).toMatch(/no answer from the server in 300 ms/)
    // Asked again: the loop backed off and went round, rather than waiting on the first request.
    await expect.poll(() => asked.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2)
    expect(asked.every((path) => path.startsWith('/sync/push'))).toBe(true)
  }, 15_000)

  it('refuses a timeout that is not a positive integer of ms when sync is made', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    cleanup.push(() => store.close())
    for (const timeoutMs of [0, -1, 1.5, Number.NaN, Infinity]) {
      let error: unknown
      try {
        createSync(store, { url: 'http://127.0.0.1:9', timeoutMs })
      } catch (e) {
        error = e
      }
      expect(error, String(timeoutMs)).toBeInstanceOf(SessionError)
      expect((error as SessionError).code).toBe('session/invalid_request')
    }
  })
})
