import { TRIGGER_TYPES } from '@colloquy/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { rpc, testSocket, user, type TestSocket } from '../server/helpers.js'
import { useInstances } from './instances-harness.js'

// `/events` on one instance carries what other instances committed: the same six event types,
// with the same payloads, as a commit on the instance itself fires.
const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789'
const pg = useInstances('--token', `alice=${ALICE}`, '--token', `bob=${BOB}`, '--requests-per-second', '0')
beforeAll(async () => {
  for (let i = 0; i < 2; i++) await pg.start()
})

const subscribeAll = async (url: string, token: string): Promise<TestSocket> => {
  const s = await testSocket(`${url.replace('http', 'ws')}/events`, token)
  for (const type of TRIGGER_TYPES) s.send({ type: 'subscribe', id: type, trigger_type: type, config: {} })
  for (const type of TRIGGER_TYPES) await s.next((m) => m.type === 'subscribed' && m.id === type)
  return s
}
const events = (s: TestSocket, session_id: string) =>
  s.messages.filter((m) => m.type === 'event' && m.payload.session_id === session_id)
const strip = (m: any) => ({ trigger_type: m.trigger_type, payload: m.payload })

describe('/events across instances', () => {
  it('a socket on instance 1 gets the six events of commits on instance 2, as a socket on instance 2 does, once each; other principals get none', async () => {
    const [one, two] = pg.servers
    const remote = await subscribeAll(one.url, ALICE)
    const local = await subscribeAll(two.url, ALICE)
    const bob = await subscribeAll(one.url, BOB)
    const id = 'ev1'
    await rpc(two.url, 'session::ensure', { session_id: id, title: 'events' }, ALICE)
    await rpc(two.url, 'session::append', { session_id: id, entry_id: 'm1', message: user('hello') }, ALICE)
    await rpc(
      two.url,
      'session::update-message',
      { session_id: id, entry_id: 'm1', content: [{ type: 'text', text: 'hello, edited' }] },
      ALICE,
    )
    await rpc(two.url, 'session::set-meta', { session_id: id, title: 'renamed' }, ALICE)
    await rpc(two.url, 'session::set-status', { session_id: id, status: 'working' }, ALICE)
    await rpc(two.url, 'session::delete', { session_id: id }, ALICE)
    await local.next(
      (m) => m.type === 'event' && m.trigger_type === 'session::deleted' && m.payload.session_id === id,
    )
    await remote.next(
      (m) => m.type === 'event' && m.trigger_type === 'session::deleted' && m.payload.session_id === id,
      10_000,
    )
    const want = events(local, id).map(strip)
    expect(want.map((e) => e.trigger_type)).toEqual([
      'session::created',
      'session::message-added',
      'session::message-updated',
      'session::meta-updated',
      'session::status-changed',
      'session::deleted',
    ])
    expect(events(remote, id).map(strip)).toEqual(want)
    // A commit on instance 1 itself fires its events there once (not again from the log).
    await rpc(one.url, 'session::ensure', { session_id: 'ev2' }, ALICE)
    await local.next((m) => m.type === 'event' && m.payload.session_id === 'ev2', 10_000)
    // A later commit on the other instance, for each socket: each instance reads it from the log
    // after ev2, so a second copy of ev2's event (fired again from the log) would arrive first.
    await rpc(two.url, 'session::ensure', { session_id: 'ev3' }, ALICE)
    await remote.next((m) => m.type === 'event' && m.payload.session_id === 'ev3', 10_000)
    await rpc(one.url, 'session::ensure', { session_id: 'ev4' }, ALICE)
    await local.next((m) => m.type === 'event' && m.payload.session_id === 'ev4', 10_000)
    await remote.sync()
    expect(events(remote, 'ev2').map((m) => m.trigger_type)).toEqual(['session::created'])
    expect(events(local, 'ev2').map((m) => m.trigger_type)).toEqual(['session::created'])
    await bob.sync()
    expect(bob.messages.filter((m) => m.type === 'event')).toEqual([])
    for (const s of [remote, local, bob]) s.close()
  }, 60_000)
})
