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
  stop(): void
}

let channels = 0
let name = ''
const open: Tab[] = []
afterEach(() => {
  for (const t of open.splice(0)) t.stop()
})

function tab(start = startRelay): Tab {
  const commits = new Subject<Commit>()
  const got: string[] = []
  const engine = {
    commits,
    // Nothing committing: the relay posts at once instead of gathering.
    pendingOverlay: () => undefined,
    flush: () => Promise.resolve(),
    applyExternal: (_source: string, _payload: ChangePayload, events: readonly EventEnvelope[]) => {
      for (const e of events) got.push((e.payload as { session_id: string }).session_id)
    },
  } as unknown as Engine
  const t = { commits, got, stop: start(engine, name) }
  open.push(t)
  return t
}

/** A local commit deleting session `id` (an event and a payload the relay posts). */
const commit = (id: string): Commit => ({
  source: 'local',
  changes: new Map([[id, { session_id: id, head: null, added: [], updated: [], reloaded: false }]]),
  events: [{ trigger_type: 'session::deleted', payload: { session_id: id, timestamp: 1 }, session_metadata: undefined }],
})

const settle = (ms = 30): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Counts the commits (not presence messages) posted on any channel while `run` runs. */
async function countPosts(run: () => Promise<void>): Promise<number> {
  const post = vi.spyOn(BroadcastChannel.prototype, 'postMessage')
  try {
    await run()
    // A post carries one commit, or several gathered in an array.
    return post.mock.calls.reduce((n, [m]) => n + (Array.isArray(m) ? m.length : typeof m === 'object' && m !== null && 'payload' in m ? 1 : 0), 0)
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
      await settle()
    })
    expect(posted).toBe(0)
    await settle(5)
    const b = tab()
    await settle()
    // Made before b's channel opened: b reads those from the disk, not from the relay.
    expect(b.got).toEqual([])
    a.commits.next(commit('s4'))
    await settle()
    expect(b.got).toEqual(['s4'])
  })

  it('commits made before the hello of a tab that just opened reach it, in order, before later ones', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    await settle()
    const b = tab()
    // a has not received b's hello yet: these are kept, then posted to b when it arrives.
    a.commits.next(commit('k1'))
    a.commits.next(commit('k2'))
    await settle()
    a.commits.next(commit('k3'))
    await settle()
    expect(b.got).toEqual(['k1', 'k2', 'k3'])
    // And b's first commits, made before it heard a's reply, reach a.
    const c = tab()
    c.commits.next(commit('c1'))
    await settle()
    expect(a.got).toEqual(['c1'])
    expect(b.got).toEqual(['k1', 'k2', 'k3', 'c1'])
  })

  it('posts every commit while a peer listens, and stops once the last peer said bye', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const b = tab()
    await settle()
    const whilePeer = await countPosts(async () => {
      for (const id of ['p1', 'p2']) a.commits.next(commit(id))
      await settle()
    })
    expect(whilePeer).toBe(2)
    expect(b.got).toEqual(['p1', 'p2'])
    b.stop()
    open.splice(open.indexOf(b), 1)
    await settle()
    const alone = await countPosts(async () => {
      a.commits.next(commit('p3'))
      await settle()
    })
    expect(alone).toBe(0)
  })

  it('never posts back what it was relayed', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    const b = tab()
    await settle()
    const posted = await countPosts(async () => {
      a.commits.next({ ...commit('t1'), source: 'tab' })
      await settle()
    })
    expect(posted).toBe(0)
    expect(b.got).toEqual([])
  })

  it('drops what another script posts on the channel that is not a commit or presence of the right shape, and keeps relaying', async () => {
    name = `relay-test-${process.pid}-${++channels}`
    const a = tab()
    await settle()
    const event = (id: string) => ({ trigger_type: 'session::deleted', payload: { session_id: id, timestamp: 1 } })
    const empty = { deleted: [], heads: [], entries: [] }
    const entry = { id: 'e1', parent_id: null, timestamp: 1, revision: 0, kind: 'custom', custom_type: 'x', data: null }
    const hostile = new BroadcastChannel(name)
    for (const m of [
      null, 42, 'text', {}, [],
      { payload: null, events: [event('bad')] },
      { payload: empty, events: null },
      { payload: empty, events: [{ trigger_type: 'session::deleted' }] },
      { payload: empty, events: [{ trigger_type: 'session::deleted', payload: { session_id: 7 } }] },
      { payload: { ...empty, deleted: [1] }, events: [event('bad')] },
      { payload: { ...empty, heads: [{}] }, events: [event('bad')] },
      { payload: { ...empty, heads: [{ meta: { session_id: 's' }, leaf: null, v: 'one' }] }, events: [event('bad')] },
      { payload: { ...empty, entries: [['s', [{ ...entry, id: 1 }]]] }, events: [event('bad')] },
      { payload: { ...empty, entries: [['s', [{ ...entry, revision: null }]]] }, events: [event('bad')] },
      { payload: { ...empty, entries: [['s']] }, events: [event('bad')] },
      // One bad message in a gathered post does not take the good ones with it.
      [null, { payload: empty, events: [event('ok1')] }, { payload: { ...empty, deleted: [{}] }, events: [event('bad')] }],
      { payload: { ...empty, heads: [{ meta: { session_id: 's' }, leaf: null, v: 2 }], entries: [['s', [entry]]] }, events: [event('ok2')] },
      // Presence of the wrong shape makes no peer.
      { hello: {}, since: 1 }, { hello: 'x'.repeat(1000), since: 1 }, { hello: 'h', since: 'now' }, { here: 5, to: 'a' }, { bye: null },
    ]) hostile.postMessage(m)
    await settle()
    hostile.close()
    expect(a.got).toEqual(['ok1', 'ok2'])
    // No peer came of it: a lone tab still posts nothing.
    const posted = await countPosts(async () => {
      a.commits.next(commit('alone'))
      await settle()
    })
    expect(posted).toBe(0)
    await settle(5)
    const b = tab()
    await settle()
    a.commits.next(commit('after'))
    await settle()
    expect(b.got).toEqual(['after'])
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
    await settle()
    reader.commits.next({ source: 'local', changes: new Map([['r', { session_id: 'r', head: undefined, added: [], updated: [], reloaded: true }]]), events: [] })
    await settle()
    expect(sending.value).toBeUndefined()
    // The other tab knows the reader is there: it posts its commits to it.
    other.commits.next(commit('o1'))
    await settle()
    expect(reader.got).toEqual(['o1'])
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
        // The reader heard the other tab's hello (or its here): it has a peer.
        await settle()
        const post = vi.spyOn(BroadcastChannel.prototype, 'postMessage')
        try {
          for (const id of ['h1', 'h2', 'h3']) reader.commits.next(commit(id))
          expect(sending.value).toBeUndefined()
          // Left before the half arrives: posted at once, not when it comes.
          if (leave === 'pagehide') page.dispatchEvent(new Event('pagehide'))
          else open.splice(open.indexOf(reader), 1)[0].stop()
          const posted = post.mock.calls.flatMap(([m]) => (Array.isArray(m) ? m : [m]))
            .filter((m) => typeof m === 'object' && m !== null && 'payload' in m)
            .map((m) => (m as { events: EventEnvelope[] }).events[0].payload.session_id)
          expect(posted).toEqual(['h1', 'h2', 'h3'])
        } finally {
          post.mockRestore()
        }
        await vi.waitFor(() => expect(other.got).toEqual(['h1', 'h2', 'h3']))
        // The half arriving later posts none of them again.
        await sending.load()
        await settle()
        expect(other.got).toEqual(['h1', 'h2', 'h3'])
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
      const event = (id: string) => ({ trigger_type: 'session::deleted', payload: { session_id: id, timestamp: 1 } })
      // Posted one after the other before the half can arrive.
      other.postMessage({ payload: empty, events: [event('m1')] })
      other.postMessage({ payload: null, events: [event('bad')] })
      other.postMessage([{ payload: empty, events: [event('m2')] }, { payload: empty, events: [event('m3')] }])
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
