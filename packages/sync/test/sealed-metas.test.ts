import { beforeAll, describe, expect, it } from 'vitest'
import type { ReplicaChange, SessionMeta } from '@colloquy/core'
import { Keyring, sealMeta } from '@colloquy/core/crypto'
import type { PullResponse, PushResponse } from '@colloquy/core/protocol'
import type { IntegrityFailure, Transport } from '../src/index.js'
import { DEFAULT_POLICY, sealingTransport } from '../src/sealing.js'

// Where a device stands on a sealed meta older than the one it holds: below where its own push
// landed it is superseded (dropped, no alarm), at or above it a replay (refused on integrity$);
// a push the server refused leaves it holding nothing, so the next meta is taken as it comes.

let ring: Keyring
beforeAll(async () => {
  ring = await Keyring.create({ passphrase: 'one passphrase for every device' })
})

const meta = (title: string): SessionMeta => ({
  session_id: 's_1',
  title,
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: 1,
  updated_at: 1,
  message_count: 0,
  metadata: {},
})

/** A server that answers every push with `answer`, and every pull with the page given next. */
function server(answer: (id: number | string) => PushResponse['results'][number]) {
  let page: PullResponse['changes'] = []
  const inner: Transport = {
    push: async (r) => ({ results: r.mutations.map((m) => answer(m.id)) }),
    pull: async () =>
      ({ changes: page, checkpoint: page.at(-1)?.seq ?? 0, head: 0, more: false }) as PullResponse,
    stream: () => ({ close() {} }),
  }
  const refused: IntegrityFailure[] = []
  const sealed = sealingTransport(inner, ring, (f) => refused.push({ ...f, at: 0 }))
  return {
    sealed,
    refused,
    /** What the next pull brings: `change` at `seq`. */
    next(seq: number, change: ReplicaChange) {
      page = [{ seq, change }]
    },
  }
}

describe('an older sealed meta', () => {
  it('below where the device’s own push landed is superseded (dropped, no alarm); at or above it, a replay (refused)', async () => {
    const srv = server((id) => ({ id, status: 'applied', seq: 10 }))
    // Another device's meta, sealed with counters from long ago.
    const older = (await sealMeta(ring, meta('older'), { policy: DEFAULT_POLICY })) as unknown as SessionMeta
    await srv.sealed.push({
      mutations: [{ id: 1, change: { type: 'meta', meta: meta('mine'), create: true } }],
    })
    srv.next(5, { type: 'meta', meta: older })
    expect((await srv.sealed.pull(0, 10)).changes).toEqual([])
    expect(srv.refused).toEqual([])
    srv.next(12, { type: 'meta', meta: older })
    expect((await srv.sealed.pull(10, 10)).changes).toEqual([])
    expect(srv.refused).toMatchObject([
      { seq: 12, session_id: 's_1', change: 'meta', code: 'session/integrity' },
    ])
  })

  it('after a push the server refused, is taken: the device holds no meta the server never had', async () => {
    const srv = server((id) => ({ id, status: 'rejected', code: 'session/invalid_request', message: 'no' }))
    const other = (await sealMeta(ring, meta('other'), { policy: DEFAULT_POLICY })) as unknown as SessionMeta
    await srv.sealed.push({
      mutations: [{ id: 1, change: { type: 'meta', meta: meta('mine'), create: true } }],
    })
    srv.next(5, { type: 'meta', meta: other })
    const page = await srv.sealed.pull(0, 10)
    expect(page.changes.map((c) => (c.change as { meta: SessionMeta }).meta.title)).toEqual(['other'])
    expect(srv.refused).toEqual([])
  })
})
