import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError, type AgentMessage, type Store } from '@colloquy/core'
import { mirrorHistory } from '../src/index.js'
import { memoryServer, rpc, user, type ServerProcess } from '../../../test/server/helpers.js'

// mirrorHistory against a real `colloquy-server` process (its `GET /sessions/:id/history`,
// seeds/002): the first load, later refreshes (new turns, an edited turn, another branch made
// active), that the mirror only reads the server, and the server's refusals.

const assistant = (text: string, extra: Partial<AgentMessage> = {}): AgentMessage =>
  ({
    role: 'assistant',
    content: [{ type: 'text', text }],
    model: 'm',
    provider: 'p',
    stop_reason: 'end',
    timestamp: 0,
    ...extra,
  }) as AgentMessage
const call = (id: string): AgentMessage => ({
  role: 'assistant',
  content: [{ type: 'function_call', id, function_id: 'shell::run', arguments: { cmd: 'ls' } }],
  model: 'm',
  provider: 'p',
  stop_reason: 'function_call',
  timestamp: 0,
})
const result = (id: string, text: string): AgentMessage => ({
  role: 'function_result',
  function_call_id: id,
  function_id: 'shell::run',
  content: [{ type: 'text', text }],
  details: { exit: 0 },
  is_error: false,
  timestamp: 0,
})

let open: ServerProcess
let closed: ServerProcess
const TOKEN = 's3cret'
beforeAll(async () => {
  ;[open, closed] = await Promise.all([memoryServer(), memoryServer(['--token', `alice=${TOKEN}`])])
})
afterAll(async () => {
  await Promise.all([open?.stop(), closed?.stop()])
})

const stores: Store[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
})
async function local(): Promise<Store> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  stores.push(store)
  return store
}

let n = 0
/** A server session with its own id (odd characters on purpose: the id travels in the path). */
async function serverSession(url = open.url, token?: string): Promise<string> {
  const session_id = `agent/run ${++n}?#`
  await rpc(url, 'session::ensure', { session_id }, token)
  return session_id
}
const append = (
  session_id: string,
  message: AgentMessage,
  extra: Record<string, unknown> = {},
  url = open.url,
  token?: string,
) => rpc<{ entry_id: string }>(url, 'session::append', { session_id, message, ...extra }, token)

/** What the server answers on `GET /sessions/:id/history`. */
async function serverHistory(session_id: string, url = open.url, token?: string): Promise<AgentMessage[]> {
  const res = await fetch(`${url}/sessions/${encodeURIComponent(session_id)}/history`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  })
  expect(res.status).toBe(200)
  return (await res.json()) as AgentMessage[]
}

/** The local copy's active path, as the history's messages. */
async function localHistory(store: Store, session_id: string): Promise<AgentMessage[]> {
  const page = await store.messages({ session_id, limit: 1000 })
  return page.messages.map((m) => m.message!)
}

/** What a display compares: everything but the times each side stamps itself. */
const shown = (messages: AgentMessage[]) => messages.map(({ timestamp: _t, ...m }) => m)

describe('mirrorHistory against colloquy-server', () => {
  it('the first refresh copies the history into a read-only local session, leaf at its end', async () => {
    const id = await serverSession()
    await append(id, user('list the files'), { entry_id: 'u1' })
    await append(id, call('c1'))
    await append(id, result('c1', 'a.txt'))
    await rpc(open.url, 'session::append', {
      session_id: id,
      custom: { custom_type: 'compaction', data: { note: 'bookkeeping' } },
    })
    await append(id, assistant('There is one file.'))
    const store = await local()
    const mirror = mirrorHistory(store, { url: `${open.url}/`, session_id: id })
    expect(mirror.session_id).toBe(`mirror:${id}`)
    expect(await mirror.refresh()).toEqual({ added: 4, updated: 0 })
    expect(shown(await localHistory(store, mirror.session_id))).toEqual(shown(await serverHistory(id)))
    const meta = (await store.get({ session_id: mirror.session_id }))!.meta
    expect(meta).toMatchObject({
      title: `History of ${id}`,
      kind: 'automation',
      metadata: { mirror: { url: `${open.url}/`, session_id: id }, read_only: true },
    })
    expect((await store.get({ session_id: mirror.session_id }))!.meta.message_count).toBe(4)
  })

  it('a refresh adds new turns, rewrites an edited one (content, usage, details) and writes nothing when nothing changed', async () => {
    const id = await serverSession()
    await append(id, user('run it'))
    const { entry_id: c } = await append(id, call('c1'))
    const { entry_id: r } = await append(id, result('c1', 'running'))
    const { entry_id: a } = await append(id, assistant('Working'))
    const store = await local()
    const mirror = mirrorHistory(store, {
      url: open.url,
      session_id: id,
      local_session_id: 'mine',
      title: 'Agent run',
    })
    expect(await mirror.refresh()).toEqual({ added: 4, updated: 0 })
    expect((await store.get({ session_id: 'mine' }))!.meta.title).toBe('Agent run')

    // The agent finishes its reply and its tool result, and takes another turn.
    await rpc(open.url, 'session::update-message', {
      session_id: id,
      entry_id: a,
      content: [{ type: 'text', text: 'Done: 3 files.' }],
      usage: { input: 10, output: 4 },
    })
    await rpc(open.url, 'session::update-message', {
      session_id: id,
      entry_id: r,
      content: [{ type: 'text', text: 'a.txt b.txt c.txt' }],
      details: { exit: 0, lines: 3 },
    })
    await append(id, user('thanks'))
    await append(id, assistant('You are welcome.'))
    expect(await mirror.refresh()).toEqual({ added: 2, updated: 2 })
    expect(shown(await localHistory(store, 'mine'))).toEqual(shown(await serverHistory(id)))
    expect(c).toBeTruthy()

    // Nothing new: nothing is written (no revision moves, the session is not touched).
    const before = await store.get({ session_id: 'mine' })
    const revisions = async () =>
      (
        await Promise.all(
          ['h_0', 'h_1', 'h_2', 'h_3', 'h_4', 'h_5'].map((entry_id) =>
            store.getMessage({ session_id: 'mine', entry_id }),
          ),
        )
      ).map((m) => m!.entry.revision)
    const revs = await revisions()
    expect(await mirror.refresh()).toEqual({ added: 0, updated: 0 })
    expect(await revisions()).toEqual(revs)
    expect(await store.get({ session_id: 'mine' })).toEqual(before)
  })

  it('another branch made active on the server: the local copy shows that branch, roles and all', async () => {
    const id = await serverSession()
    const { entry_id: u1 } = await append(id, user('first question'))
    await append(id, call('c1'))
    await append(id, result('c1', 'out'))
    await append(id, assistant('answer one'))
    const store = await local()
    const mirror = mirrorHistory(store, { url: open.url, session_id: id })
    await mirror.refresh()
    // The user edits the first question: a sibling branch, shorter, with other roles in place.
    await append(id, assistant('a different answer'), { parent_id: u1 })
    expect((await serverHistory(id)).map((m) => m.role)).toEqual(['user', 'assistant'])
    await mirror.refresh()
    expect(shown(await localHistory(store, mirror.session_id))).toEqual(shown(await serverHistory(id)))
    // And back: the first branch again.
    await append(id, user('and again'), { parent_id: u1 })
    await mirror.refresh()
    expect(shown(await localHistory(store, mirror.session_id))).toEqual(shown(await serverHistory(id)))
  })

  it('two refreshes at once (a poll and a click) both succeed and leave one copy', async () => {
    const id = await serverSession()
    await rpc(open.url, 'session::append-many', {
      session_id: id,
      messages: Array.from({ length: 200 }, (_, i) => user(`turn ${i}`)),
    })
    const store = await local()
    const mirror = mirrorHistory(store, { url: open.url, session_id: id })
    const results = await Promise.all([mirror.refresh(), mirror.refresh()])
    expect(results).toEqual([
      { added: 200, updated: 0 },
      { added: 0, updated: 0 },
    ])
    expect(shown(await localHistory(store, mirror.session_id))).toEqual(shown(await serverHistory(id)))
  })

  it('only reads the server: refreshes leave the server session as it was, a local edit is put back', async () => {
    const id = await serverSession()
    await append(id, user('hello'))
    await append(id, assistant('hi'))
    const get = () => rpc(open.url, 'session::get', { session_id: id })
    const before = await get()
    const headBefore = (await (await fetch(`${open.url}/health`)).json()).head as number
    const store = await local()
    const mirror = mirrorHistory(store, { url: open.url, session_id: id })
    await mirror.refresh()
    // Someone edits the mirror locally: the next refresh shows the server's history again.
    await store.updateMessage({
      session_id: mirror.session_id,
      entry_id: 'h_1',
      content: [{ type: 'text', text: 'edited here' }],
    })
    expect(await mirror.refresh()).toEqual({ added: 0, updated: 1 })
    expect(shown(await localHistory(store, mirror.session_id))).toEqual(shown(await serverHistory(id)))
    expect(await get()).toEqual(before)
    expect((await (await fetch(`${open.url}/health`)).json()).head).toBe(headBefore)
  })

  it('an unknown session is session/not_found, and nothing is created locally', async () => {
    const store = await local()
    const mirror = mirrorHistory(store, { url: open.url, session_id: 'no such run' })
    const e = await mirror.refresh().catch((x: unknown) => x)
    expect(e).toBeInstanceOf(SessionError)
    expect((e as SessionError).code).toBe('session/not_found')
    expect((e as SessionError).message).toContain('HTTP 404')
    expect(await store.get({ session_id: mirror.session_id })).toBeNull()
  })

  it('auth: with the token it mirrors; without it, or with a wrong one, a clear refusal (not a storage failure) and nothing written', async () => {
    const id = await serverSession(closed.url, TOKEN)
    await append(id, user('secret plan'), {}, closed.url, TOKEN)
    const store = await local()
    for (const token of [undefined, 'wrong']) {
      const e = await mirrorHistory(store, { url: closed.url, session_id: id, token })
        .refresh()
        .catch((x: unknown) => x)
      expect(e).toBeInstanceOf(SessionError)
      expect((e as SessionError).code).toBe('session/invalid_request')
      expect((e as SessionError).message).toMatch(/HTTP 401.*auth\/unauthorized/)
      expect(await store.get({ session_id: `mirror:${id}` })).toBeNull()
    }
    const mirror = mirrorHistory(store, { url: closed.url, session_id: id, token: TOKEN })
    expect(await mirror.refresh()).toEqual({ added: 1, updated: 0 })
    expect(shown(await localHistory(store, mirror.session_id))).toEqual(
      shown(await serverHistory(id, closed.url, TOKEN)),
    )
  })

  it('a server that is gone is a retryable storage failure; nothing is written', async () => {
    const gone = await memoryServer()
    const url = gone.url
    await gone.stop()
    const store = await local()
    const e = await mirrorHistory(store, { url, session_id: 'x' })
      .refresh()
      .catch((x: unknown) => x)
    expect(e).toBeInstanceOf(SessionError)
    expect((e as SessionError).code).toBe('session/storage')
    expect(await store.get({ session_id: 'mirror:x' })).toBeNull()
  })
})
