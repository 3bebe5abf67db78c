import { Subject } from 'rxjs'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { ChangePayload, Commit } from '../src/engine/changes.js'
import type { Engine } from '../src/engine/engine.js'
import type { EventEnvelope } from '../src/model/model.js'
import { relayCode, startRelay } from '../src/relay/relay.js'

// The relay between tabs, on Node's BroadcastChannel (relays in one process stand for tabs).
// Each "tab" is the part of an engine the relay uses: its commit stream and `applyExternal`.

interface Tab {
  readonly commits: Subject<Commit>
  /** What this tab was relayed, in order. */
  readonly got: string[]
  /** Every message its relay's channel handler has run on, in order (presence included). */
  readonly handled: unknown[]
  stop(): void
}

let channels = 0
let name = ''
const open: Tab[] = []
afterEach(() => {
  for (const t of open.splice(0)) t.stop()
})

/**
 * A BroadcastChannel that records each message once its `onmessage` handler has run: a test's
 * signal that a relay took a message in (a peer's hello, here or bye), where the relay itself
 * shows nothing.
 */
function watchedChannel(handled: unknown[]): typeof BroadcastChannel {
  const handler = Object.getOwnPropertyDescriptor(BroadcastChannel.prototype, 'onmessage')!
  return class extends BroadcastChannel {
    constructor(channelName: string) {
      super(channelName)
      Object.defineProperty(this, 'onmessage', {
        get: () => handler.get!.call(this) as unknown,
        set: (run: ((event: MessageEvent<unknown>) => void) | null) =>
          handler.set!.call(
            this,
            run &&
              ((event: MessageEvent<unknown>) => {
                run.call(this, event)
                handled.push(event.data)
              }),
          ),
      })
    }
  }
}

function tab(start = startRelay): Tab {
  const commits = new Subject<Commit>()
  const got: string[] = []
  const handled: unknown[] = []
  const engine = {
    commits,
    // Nothing committing: the relay posts at once instead of gathering.
    pendingOverlay: () => undefined,
    flush: () => Promise.resolve(),
    applyExternal: (_source: string, _payload: ChangePayload, events: readonly EventEnvelope[]) => {
      for (const e of events) got.push((e.payload as { session_id: string }).session_id)
    },
  } as unknown as Engine
  // The relay opens its channel as it starts: that one channel is the watched kind.
  const plain = globalThis.BroadcastChannel
  globalThis.BroadcastChannel = watchedChannel(handled)
  let stop: () => void
  try {
    stop = start(engine, name)
  } finally {
    globalThis.BroadcastChannel = plain
  }
  const t = { commits, got, handled, stop }
  open.push(t)
  return t
}

/** A local commit deleting session `id` (an event and a payload the relay posts). */
const commit = (id: string): Commit => ({
  source: 'local',
  changes: new Map([[id, { session_id: id, head: null, added: [], updated: [], reloaded: false }]]),
  events: [
    {
      trigger_type: 'session::deleted',
      payload: { session_id: id, timestamp: 1 },
      session_metadata: undefined,
    },
  ],
})

/** Presence a relay handled: a peer's `hello`, its `here` (answering a hello) or its `bye`. */
const hello = expect.objectContaining({ hello: expect.any(String) })
const here = expect.objectContaining({ here: expect.any(String) })
const bye = expect.objectContaining({ bye: expect.any(String) })
/** Resolves once `t` has handled `message` (after the first `from` messages it handled). */
const heard = (t: Tab, message: unknown, from = 0): Promise<void> =>
  vi.waitFor(() => expect(t.handled.slice(from)).toContainEqual(message))

/**
 * Resolves once `Date.now()` has moved past `time`. A relay keeps a lone tab's commits and posts
 * to a newcomer those made since its channel opened, both in milliseconds of that clock: a
 * commit is "before" a tab only once the clock moved on.
 */
const clockPasses = (time: number): Promise<void> =>
  vi.waitFor(() => {
    if (Date.now() <= time) throw new Error(`the clock still reads ${time}`)
  })

/** Counts the commits (not presence messages) posted on any channel while `run` runs. */
async function countPosts(run: () => Promise<void>): Promise<number> {
  const post = vi.spyOn(BroadcastChannel.prototype, 'postMessage')
  try {
    await run()
    // A post carries one commit, or several gathered in an array.
    return post.mock.calls.reduce(
      (n, [m]) =>
        n + (Array.isArray(m) ? m.length : typeof m === 'object' && m !== null && 'payload' in m ? 1 : 0),
      0,
    )
  } finally {
    post.mockRestore()
  }
}

describe('relay between tabs', () => {
  // A tab commits only through the engine's batch code, which brings the relay's sending half
  // with it: here, as in a tab that has written, it is here before the first commit.
  beforeAll(async () => {
    tab().stop()
    open.splice(0)
    await relayCode()
  })

  it('a tab alone posts no commit; its commits reach a tab opened later only from then on', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const posted = await countPosts(async () => {
      for (const id of ['s1', 's2', 's3']) a.commits.next(commit(id))
      await clockPasses(Date.now())
      const b = tab()
      a.commits.next(commit('s4'))
      // a posts in order: had it posted s1-s3 (or did once b said hello), they came first.
      await vi.waitFor(() => expect(b.got).toContain('s4'))
      // Made before b's channel opened: b reads those from the disk, not from the relay.
      expect(b.got).toEqual(['s4'])
    })
    // s4 alone: nothing was posted while a was alone.
    expect(posted).toBe(1)
  })

  it('commits made before the hello of a tab that just opened reach it, in order, before later ones', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const b = tab()
    // a has not received b's hello yet (that takes a task): these are kept, then posted to b when it arrives.
    a.commits.next(commit('k1'))
    a.commits.next(commit('k2'))
    expect(a.handled).toEqual([])
    await heard(a, hello)
    a.commits.next(commit('k3'))
    await vi.waitFor(() => expect(b.got).toContain('k3'))
    expect(b.got).toEqual(['k1', 'k2', 'k3'])
    // And a newcomer's first commits, made before it heard the others' replies, reach them.
    const c = tab()
    c.commits.next(commit('c1'))
    expect(c.handled).toEqual([])
    await vi.waitFor(() => expect(a.got).toEqual(['c1']))
    await vi.waitFor(() => expect(b.got).toEqual(['k1', 'k2', 'k3', 'c1']))
  })

  it('posts every commit while a peer listens, and stops once the last peer said bye', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const b = tab()
    // a heard b's hello: b is its peer, and its commits are posted as they come.
    await heard(a, hello)
    const whilePeer = await countPosts(async () => {
      for (const id of ['p1', 'p2']) a.commits.next(commit(id))
      await vi.waitFor(() => expect(b.got).toEqual(['p1', 'p2']))
    })
    expect(whilePeer).toBe(2)
    b.stop()
    open.splice(open.indexOf(b), 1)
    await heard(a, bye)
    const alone = await countPosts(async () => {
      a.commits.next(commit('p3'))
      // A tab opened afterwards, and a commit made for it: a posts in order, so p3, had it been
      // posted, would have gone first.
      await clockPasses(Date.now())
      const c = tab()
      a.commits.next(commit('p4'))
      await vi.waitFor(() => expect(c.got).toContain('p4'))
      expect(c.got).toEqual(['p4'])
    })
    expect(alone).toBe(1)
  })

  it('never posts back what it was relayed', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const b = tab()
    await heard(a, hello)
    const posted = await countPosts(async () => {
      a.commits.next({ ...commit('t1'), source: 'tab' })
      // Posted in order: t1, had it been posted, would reach b before t2.
      a.commits.next(commit('t2'))
      await vi.waitFor(() => expect(b.got).toContain('t2'))
    })
    expect(posted).toBe(1)
    expect(b.got).toEqual(['t2'])
  })

  it('drops what another script posts on the channel that is not a commit or presence of the right shape, and keeps relaying', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const event = (id: string) => ({
      trigger_type: 'session::deleted',
      payload: { session_id: id, timestamp: 1 },
    })
    const empty = { deleted: [], heads: [], entries: [] }
    const entry = {
      id: 'e1',
      parent_id: null,
      timestamp: 1,
      revision: 0,
      kind: 'custom',
      custom_type: 'x',
      data: null,
    }
    const hostile = new BroadcastChannel(name)
    for (const m of [
      null,
      42,
      'text',
      {},
      [],
      { payload: null, events: [event('bad')] },
      { payload: empty, events: null },
      { payload: empty, events: [{ trigger_type: 'session::deleted' }] },
      { payload: empty, events: [{ trigger_type: 'session::deleted', payload: { session_id: 7 } }] },
      { payload: { ...empty, deleted: [1] }, events: [event('bad')] },
      { payload: { ...empty, heads: [{}] }, events: [event('bad')] },
      {
        payload: { ...empty, heads: [{ meta: { session_id: 's' }, leaf: null, v: 'one' }] },
        events: [event('bad')],
      },
      { payload: { ...empty, entries: [['s', [{ ...entry, id: 1 }]]] }, events: [event('bad')] },
      { payload: { ...empty, entries: [['s', [{ ...entry, revision: null }]]] }, events: [event('bad')] },
      { payload: { ...empty, entries: [['s']] }, events: [event('bad')] },
      // One bad message in a gathered post does not take the good ones with it.
      [
        null,
        { payload: empty, events: [event('ok1')] },
        { payload: { ...empty, deleted: [{}] }, events: [event('bad')] },
      ],
      {
        payload: {
          ...empty,
          heads: [{ meta: { session_id: 's' }, leaf: null, v: 2 }],
          entries: [['s', [entry]]],
        },
        events: [event('ok2')],
      },
      // Presence of the wrong shape makes no peer.
      { hello: {}, since: 1 },
      { hello: 'x'.repeat(1000), since: 1 },
      { hello: 'h', since: 'now' },
      { here: 5, to: 'a' },
      { bye: null },
      // Posted last, delivered last: once it is in, a has handled everything above.
      { payload: empty, events: [event('end')] },
    ])
      hostile.postMessage(m)
    await vi.waitFor(() => expect(a.got).toContain('end'))
    hostile.close()
    expect(a.got).toEqual(['ok1', 'ok2', 'end'])
    // No peer came of it: a lone tab still posts nothing.
    const posted = await countPosts(async () => {
      a.commits.next(commit('alone'))
      await clockPasses(Date.now())
      const b = tab()
      a.commits.next(commit('after'))
      await vi.waitFor(() => expect(b.got).toContain('after'))
      expect(b.got).toEqual(['after'])
    })
    expect(posted).toBe(1)
  })

  it('a tab that never writes answers presence without the sending half; commits made while it is fetched go out in order', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    // A page in a module graph of its own: the sending half is not here.
    vi.resetModules()
    const fresh = await import('../src/relay/relay.js')
    const reader = tab(fresh.startRelay)
    const sending = fresh.senderCode
    expect(sending.value).toBeUndefined()
    // A tab that opens later hears the reader's `here` and says nothing else; the reader
    // fetched nothing for it, and a reload of a session from disk fetches nothing either.
    const other = tab()
    await heard(other, here)
    expect(sending.value).toBeUndefined()
    // The relay asks for the sending half synchronously when a commit needs it.
    const load = vi.spyOn(sending, 'load')
    reader.commits.next({
      source: 'local',
      changes: new Map([['r', { session_id: 'r', head: undefined, added: [], updated: [], reloaded: true }]]),
      events: [],
    })
    expect(load).not.toHaveBeenCalled()
    // The other tab knows the reader is there: it posts its commits to it.
    other.commits.next(commit('o1'))
    await vi.waitFor(() => expect(reader.got).toEqual(['o1']))
    expect(sending.value).toBeUndefined()
    // Changes applied from elsewhere before any write: posted to the peer once the half is here, in order.
    for (const id of ['e1', 'e2', 'e3']) reader.commits.next(commit(id))
    await vi.waitFor(() => expect(other.got).toEqual(['e1', 'e2', 'e3']), { timeout: 5000 })
    expect(sending.value).toBeDefined()
    reader.commits.next(commit('e4'))
    await vi.waitFor(() => expect(other.got).toEqual(['e1', 'e2', 'e3', 'e4']))
  })

  it('commits made before the sending half came are posted when the page is left or the relay stops, in order, once', async () => {
    for (const leave of ['pagehide', 'stop'] as const) {
      name = `relay-test-${process.pid}-${++channels}`
      // The page's events (Node's global is no EventTarget).
      const page = new EventTarget()
      vi.stubGlobal('addEventListener', page.addEventListener.bind(page))
      vi.stubGlobal('removeEventListener', page.removeEventListener.bind(page))
      vi.resetModules()
      try {
        const fresh = await import('../src/relay/relay.js')
        const other = tab()
        const reader = tab(fresh.startRelay)
        const sending = fresh.senderCode
        // The reader heard the other tab's here (the answer to its hello): it has a peer.
        await heard(reader, here)
        const post = vi.spyOn(BroadcastChannel.prototype, 'postMessage')
        try {
          for (const id of ['h1', 'h2', 'h3']) reader.commits.next(commit(id))
          expect(sending.value).toBeUndefined()
          // Left before the half arrives: posted at once, not when it comes.
          if (leave === 'pagehide') page.dispatchEvent(new Event('pagehide'))
          else open.splice(open.indexOf(reader), 1)[0].stop()
          const posted = post.mock.calls
            .flatMap(([m]) => (Array.isArray(m) ? m : [m]))
            .filter((m) => typeof m === 'object' && m !== null && 'payload' in m)
            .map((m) => (m as { events: EventEnvelope[] }).events[0].payload.session_id)
          expect(posted).toEqual(['h1', 'h2', 'h3'])
        } finally {
          post.mockRestore()
        }
        await vi.waitFor(() => expect(other.got).toEqual(['h1', 'h2', 'h3']))
        // The half arriving later posts none of them again. The relay's own wait for it was
        // made first, so it has run when this one resumes.
        const again = vi.spyOn(BroadcastChannel.prototype, 'postMessage')
        try {
          await sending.load()
          if (leave === 'pagehide') {
            // Both pages come back from the back/forward cache and greet each other again: a
            // commit made now is posted after anything the half posted or kept meanwhile.
            const before = reader.handled.length
            page.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true }))
            await heard(reader, here, before)
            reader.commits.next(commit('h4'))
            await vi.waitFor(() => expect(other.got).toContain('h4'))
          }
          expect(other.got).toEqual(leave === 'pagehide' ? ['h1', 'h2', 'h3', 'h4'] : ['h1', 'h2', 'h3'])
          expect(
            again.mock.calls.filter(
              ([m]) => Array.isArray(m) || (typeof m === 'object' && m !== null && 'payload' in m),
            ),
          ).toHaveLength(leave === 'pagehide' ? 1 : 0)
        } finally {
          again.mockRestore()
        }
      } finally {
        // Stopped while the page's events are still the stub they listen on.
        for (const t of open.splice(0)) t.stop()
        vi.unstubAllGlobals()
      }
    }
  })

  it('a tab answers presence without the receiving half; commit messages that come while it is fetched are folded in order, malformed ones dropped', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    vi.resetModules()
    const fresh = await import('../src/relay/relay.js')
    const reader = tab(fresh.startRelay)
    const receiving = fresh.receiverCode
    const other = new BroadcastChannel(name)
    const heard: unknown[] = []
    other.onmessage = (e: MessageEvent<unknown>) => heard.push(e.data)
    try {
      other.postMessage({ hello: 'other', since: 0 })
      await vi.waitFor(() => expect(heard).toContainEqual(expect.objectContaining({ to: 'other' })))
      expect(receiving.value).toBeUndefined()
      const empty = { deleted: [], heads: [], entries: [] }
      const event = (id: string) => ({
        trigger_type: 'session::deleted',
        payload: { session_id: id, timestamp: 1 },
      })
      // Posted one after the other before the half can arrive.
      other.postMessage({ payload: empty, events: [event('m1')] })
      other.postMessage({ payload: null, events: [event('bad')] })
      other.postMessage([
        { payload: empty, events: [event('m2')] },
        { payload: empty, events: [event('m3')] },
      ])
      other.postMessage({ payload: empty, events: [event('m4')] })
      await vi.waitFor(() => expect(reader.got).toEqual(['m1', 'm2', 'm3', 'm4']), { timeout: 5000 })
      expect(receiving.value).toBeDefined()
      other.postMessage({ payload: empty, events: [event('m5')] })
      await vi.waitFor(() => expect(reader.got).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']))
    } finally {
      other.close()
    }
  })
})
