import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { createStore, memoryStorage } from '@colloquy/core'
import { createSync } from '../src/index.js'
import { loopback } from './loopback.js'

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

describe('a server that is down', () => {
  it('is not asked again for every local change: a reply streamed meanwhile waits for the backoff, then goes in one push', async () => {
    const server = await loopback()
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, { url: 'http://unused', transport: server.transport() })
    cleanup.push(
      () => sync.close(),
      () => store.close(),
      () => server.close(),
    )
    const { session_id } = await store.create({ title: 'chat' })
    server.online = false
    sync.start()
    await firstValueFrom(sync.status$.pipe(filter((s) => s.state === 'error')))
    const asked = (): number => server.requests.push + server.requests.pull

    // A reply streams in while the loop waits out its first backoff (250 ms at least).
    const before = asked()
    const { entry_id } = await store.append({
      session_id,
      message: {
        role: 'assistant',
        content: [],
        model: 'm',
        provider: 'p',
        stop_reason: 'end',
        timestamp: 1,
      },
    })
    let text = ''
    for (let i = 0; i < 40; i++)
      await store.updateMessage({
        session_id,
        entry_id,
        content: [{ type: 'text', text: (text += `t${i} `) }],
      })
    // The timer may have fired once during the burst; one request per chunk is what must not happen.
    expect(asked() - before).toBeLessThanOrEqual(2)

    server.online = true
    await sync.flush()
    expect((await server.store.getMessage({ session_id, entry_id }))!.entry).toEqual(
      (await store.getMessage({ session_id, entry_id }))!.entry,
    )
  })
})
