import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  checkPullResponse,
  checkPushRequest,
  checkPushResponse,
  checkStreamMessage,
  type PullResponse,
} from '@colloquy/core/protocol'
import type { FeedPage } from '../../packages/server/src/index.js'

/** The fields the two old declarations disagreed on, settled by what the server sends. */
const refused = (what: RegExp) =>
  expect.objectContaining({
    name: 'SessionError',
    code: 'session/invalid_request',
    message: expect.stringMatching(what),
  })
const change = { seq: 3, change: { type: 'leaf', session_id: 's', entry_id: null } }
const entry = {
  id: 'e',
  parent_id: null,
  timestamp: 1,
  revision: 2,
  kind: 'message',
  message: { role: 'user', content: [], timestamp: 1 },
}

describe('the protocol checks', () => {
  it('a changes or ready frame carries its checkpoint (the server always sends it; the client resumes from it)', () => {
    expect(
      checkStreamMessage({ type: 'changes', changes: [change], prev: 2, checkpoint: 4, head: 5 }),
    ).toMatchObject({ checkpoint: 4 })
    expect(() => checkStreamMessage({ type: 'changes', changes: [change], prev: 2, head: 5 })).toThrow(
      refused(/checkpoint must be a non-negative integer/),
    )
    expect(() =>
      checkStreamMessage({ type: 'changes', changes: [change], prev: 2, checkpoint: 2, head: 5 }),
    ).toThrow(refused(/checkpoint behind the frame/))
    expect(() => checkStreamMessage({ type: 'ready', head: 5 })).toThrow(refused(/checkpoint/))
    expect(() => checkStreamMessage({ type: 'reset', checkpoint: 3, head: 5 })).toThrow(
      refused(/reset is at checkpoint 0/),
    )
  })

  it('the answers on the stream (pushed, pong, error) are frames of the protocol, checked like the rest', () => {
    expect(
      checkStreamMessage({ type: 'pushed', id: 'p', results: [{ id: 1, status: 'applied', seq: 3 }] }),
    ).toMatchObject({ type: 'pushed' })
    expect(checkStreamMessage({ type: 'pong', id: { any: 'json' } })).toStrictEqual({
      type: 'pong',
      id: { any: 'json' },
    })
    expect(
      checkStreamMessage({
        type: 'error',
        error: { code: 'session/invalid_request', message: 'no' },
        retry_after_ms: 20,
      }),
    ).toMatchObject({ retry_after_ms: 20 })
    expect(() =>
      checkStreamMessage({ type: 'pushed', id: 'p', results: [{ id: 1.5, status: 'applied' }] }),
    ).toThrow(refused(/results\[0\]/))
    expect(() => checkStreamMessage({ type: 'error', error: 'no' })).toThrow(refused(/error must be/))
    expect(() =>
      checkStreamMessage({ type: 'error', error: { code: 'c', message: 'm' }, retry_after_ms: -1 }),
    ).toThrow(refused(/retry_after_ms/))
    expect(() => checkStreamMessage({ type: 'surprise' })).toThrow(
      refused(/unknown stream frame type "surprise"/),
    )
  })

  it('a mutation id is a safe integer or an id string, both ways (the server echoes what it takes)', () => {
    const mutations = [
      { id: 7, change: { type: 'delete', session_id: 's' } },
      { id: 'k-1', change: { type: 'delete', session_id: 't' } },
    ]
    expect(checkPushRequest({ mutations }).mutations.map((m) => m.id)).toStrictEqual([7, 'k-1'])
    expect(() => checkPushRequest({ mutations: [{ ...mutations[0], id: 1.5 }] })).toThrow(
      refused(/mutations\[0\]\.id/),
    )
    expect(() => checkPushRequest({ mutations: [{ ...mutations[0], id: 'q\ud800' }] })).toThrow(
      refused(/mutations\[0\]\.id/),
    )
    expect(
      checkPushResponse(
        {
          results: [
            { id: 7, status: 'applied' },
            { id: 'k-1', status: 'unchanged', seq: 2 },
          ],
        },
        [7, 'k-1'],
      ).results,
    ).toHaveLength(2)
  })

  it('a push answer has one result per mutation, in order, each as its status requires', () => {
    const ok = { id: 1, status: 'applied' }
    expect(() => checkPushResponse({ results: [] }, [1])).toThrow(refused(/0 results for 1 mutations/))
    expect(() => checkPushResponse({ results: [{ ...ok, id: 2 }, ok] }, [1, 2])).toThrow(
      refused(/results\[0\] must answer mutation 1/),
    )
    expect(() => checkPushResponse({ results: [{ id: 1, status: 'maybe' }] }, [1])).toThrow(
      refused(/results\[0\]/),
    )
    expect(() => checkPushResponse({ results: [{ id: 1, status: 'conflict' }] }, [1])).toThrow(
      refused(/results\[0\]\.current/),
    )
    expect(
      checkPushResponse({ results: [{ id: 1, status: 'conflict', current: entry }] }, [1]).results[0],
    ).toMatchObject({ current: { revision: 2 } })
    expect(() =>
      checkPushResponse({ results: [{ id: 1, status: 'rejected', code: 'session/not_found' }] }, [1]),
    ).toThrow(refused(/code and message/))
    expect(() =>
      checkPushResponse({ results: [{ id: 1, status: 'rejected', code: 'c', message: 'm', seq: 3 }] }, [1]),
    ).toThrow(refused(/seq comes only with applied or unchanged/))
  })

  it('a pull page: its changes follow the cursor, its checkpoint covers them; a reset page is empty at 0', () => {
    expect(checkPullResponse({ changes: [change], checkpoint: 3, head: 9, more: true }, 2)).toMatchObject({
      checkpoint: 3,
    })
    expect(() => checkPullResponse({ changes: [change], checkpoint: 3, head: 9, more: true }, 3)).toThrow(
      refused(/does not follow 3/),
    )
    expect(
      checkPullResponse({ changes: [], checkpoint: 0, head: 9, more: true, reset: true, epoch: 'x' }, 12),
    ).toMatchObject({ reset: true, epoch: 'x' })
    expect(() =>
      checkPullResponse({ changes: [change], checkpoint: 0, head: 9, more: true, reset: true }, 12),
    ).toThrow(refused(/reset page is empty/))
    expect(() => checkPullResponse({ changes: [], checkpoint: 0, more: true, reset: true }, 12)).toThrow(
      refused(/head/),
    )
  })
})

describe("the server's own types", () => {
  it('a page of its change feed is a pull answer of the protocol (checked by the type checker)', () => {
    expectTypeOf<FeedPage>().toExtend<PullResponse>()
  })
})
