import { describe, expect, it } from 'vitest'
import { rpc, useMemoryServer, user } from './helpers.js'

const server = useMemoryServer()

const call = (id: string) => ({
  role: 'assistant',
  stop_reason: 'function_call',
  model: 'm',
  provider: 'p',
  timestamp: 0,
  content: [{ type: 'function_call', id, function_id: 'shell::run', arguments: { cmd: 'ls' } }],
})

describe('agent history endpoints (seeds/002)', () => {
  it('GET /meta declares capabilities.history', async () => {
    const meta = await (await fetch(`${server.url}/meta`)).json()
    expect(meta.capabilities.history).toStrictEqual({ full: {} })
    expect(meta.agents[0].capabilities.history).toStrictEqual({ full: {} })
  })

  it('GET /sessions/:id/history is the active path as a message array, unresolved tool calls included', async () => {
    const session_id = 'agent/run 7?'
    const history = async () =>
      (await (
        await fetch(`${server.url}/sessions/${encodeURIComponent(session_id)}/history`)
      ).json()) as Array<Record<string, any>>
    await rpc(server.url, 'session::ensure', { session_id })
    await rpc(server.url, 'session::append', { session_id, entry_id: 'u1', message: user('list files') })
    await rpc(server.url, 'session::append', { session_id, message: call('c1') })
    await rpc(server.url, 'session::append', {
      session_id,
      message: {
        role: 'function_result',
        function_call_id: 'c1',
        function_id: 'shell::run',
        content: [{ type: 'text', text: 'a.txt' }],
        timestamp: 0,
      },
    })
    await rpc(server.url, 'session::append', {
      session_id,
      custom: { custom_type: 'compaction', data: { note: 'bookkeeping' } },
    })
    const { entry_id: tip } = await rpc(server.url, 'session::append', { session_id, message: call('c2') })
    // A sibling branch becomes active: the history follows it.
    await rpc(server.url, 'session::append', { session_id, parent_id: 'u1', message: user('another try') })
    expect((await history()).map((m) => m.content[0].text)).toStrictEqual(['list files', 'another try'])

    await rpc(server.url, 'session::set-active-leaf', { session_id, entry_id: tip })
    const messages = await history()
    // Bookkeeping (the compaction entry) is not a message; the last call has no result yet.
    expect(messages.map((m) => m.role)).toStrictEqual(['user', 'assistant', 'function_result', 'assistant'])
    expect(messages[3]).toStrictEqual(call('c2'))
    expect(messages[2]).toMatchObject({ function_call_id: 'c1', details: null, is_error: false })
  })

  it('answers 404 for an unknown session', async () => {
    const res = await fetch(`${server.url}/sessions/nope/history`)
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe('session/not_found')
  })
})
