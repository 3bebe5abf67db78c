import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryServer, pullAll, rpc, testSocket, user, type ServerProcess } from './helpers.js'

let server: ServerProcess
let ws: string
let url: string
beforeAll(async () => {
  server = await memoryServer()
  url = server.url
  ws = url.replace('http', 'ws')
})
afterAll(() => server?.stop())

const seqs = (messages: any[]): number[] =>
  messages.filter((m) => m.type === 'changes').flatMap((m) => m.changes.map((c: { seq: number }) => c.seq))

describe('live stream (/sync/stream)', () => {
  it('sends the backlog after the checkpoint, `ready`, then each commit, with an unbroken prev chain', async () => {
    const { session_id } = await rpc(url, 'session::create', { title: 'live' })
    await rpc(url, 'session::append', { session_id, message: user('before') })
    const { checkpoint } = await pullAll(url)
    await rpc(url, 'session::append', { session_id, message: user('missed while offline') })

    const s = await testSocket(`${ws}/sync/stream?since=${checkpoint}`)
    const ready = await s.next((m) => m.type === 'ready')
    const backlog = s.messages.filter((m) => m.type === 'changes')
    expect(backlog[0].prev).toBe(checkpoint)
    expect(JSON.stringify(backlog)).toContain('missed while offline')
    expect(JSON.stringify(backlog)).not.toContain('"before"')
    expect(ready.checkpoint).toBe(ready.head)

    await rpc(url, 'session::append', { session_id, message: user('live one') })
    await rpc(url, 'session::set-status', { session_id, status: 'working' })
    await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('working'))
    const all = s.messages.filter((m) => m.type === 'changes')
    // Each message names the last seq sent before it: a client detects any gap.
    for (let i = 1; i < all.length; i++) expect(all[i].prev).toBe(all[i - 1].changes.at(-1).seq)
    const got = seqs(s.messages)
    expect(got).toStrictEqual([...got].sort((a, b) => a - b))
    // Everything a pull from the same checkpoint returns now, the stream has delivered (the
    // pull leaves out records superseded since).
    const pulled = (await pullAll(url, checkpoint)).changes.map((c) => c.seq)
    expect(pulled.filter((seq) => !got.includes(seq))).toStrictEqual([])
    s.close()
  })

  it('holds commits made while the backlog is read, and sends them once, after it', async () => {
    const { session_id } = await rpc(url, 'session::create', { title: 'busy' })
    const writes = Array.from({ length: 30 }, (_, i) =>
      rpc(url, 'session::append', { session_id, message: user(`w${i}`) }),
    )
    const s = await testSocket(`${ws}/sync/stream?since=0`)
    await Promise.all(writes)
    await s.next((m) => m.type === 'ready')
    await rpc(url, 'session::set-meta', { session_id, title: 'done' })
    await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('"done"'))
    const got = seqs(s.messages)
    expect(new Set(got).size).toBe(got.length)
    const texts = JSON.stringify(s.messages)
    for (let i = 0; i < 30; i++) expect(texts).toContain(`"w${i}"`)
    s.close()
  })

  it('refuses a bad checkpoint before upgrading, and a plain GET', async () => {
    const { openSocket } = await import('../conformance/http-client.js')
    await expect(openSocket(`${ws}/sync/stream?since=abc`)).rejects.toMatchObject({ status: 400 })
    expect((await fetch(`${url}/sync/stream?since=0`)).status).toBe(426)
  })
})

describe('events (/events)', () => {
  it("delivers the contract's event payloads to filtered subscriptions; bad configs are answered per subscription", async () => {
    const e = await testSocket(`${ws}/events`)
    e.send({
      type: 'subscribe',
      id: 'a',
      trigger_type: 'session::message-added',
      config: { roles: ['assistant'] },
    })
    e.send({ type: 'subscribe', id: 'bad', trigger_type: 'session::created', config: { sesion_id: 'x' } })
    e.send({ type: 'subscribe', id: 'c', trigger_type: 'session::created' })
    await e.next((m) => m.type === 'subscribed' && m.id === 'c')
    expect(await e.next((m) => m.id === 'bad')).toMatchObject({
      type: 'error',
      error: { code: 'session/invalid_request' },
    })
    expect((await e.next((m) => m.id === 'bad')).error.message).toMatch(/unknown field/)
    const { session_id } = await rpc(url, 'session::create', { title: 'evented' })
    await rpc(url, 'session::append', { session_id, message: user('not an assistant') })
    const { entry_id } = await rpc(url, 'session::append', {
      session_id,
      message: {
        role: 'assistant',
        content: [],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: 0,
      },
    })
    await e.sync()
    const events = e.messages.filter((m) => m.type === 'event')
    expect(events.map((m) => [m.id, m.trigger_type])).toStrictEqual([
      ['c', 'session::created'],
      ['a', 'session::message-added'],
    ])
    expect(events[0].payload).toMatchObject({ session_id, title: 'evented', status: 'idle' })
    expect(events[1].payload).toMatchObject({ session_id, entry_id, message: { role: 'assistant' } })
    e.send({ type: 'unsubscribe', id: 'a' })
    await e.next((m) => m.type === 'unsubscribed' && m.id === 'a')
    await rpc(url, 'session::append', {
      session_id,
      message: {
        role: 'assistant',
        content: [],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: 0,
      },
    })
    await e.sync()
    expect(e.messages.filter((m) => m.type === 'event')).toHaveLength(2)
    e.close()
  })
})
