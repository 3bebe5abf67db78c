import { describe, expect, it } from 'vitest'
import { tabMessageOf } from '../src/tab-channel.js'

// What another tab posts is taken only as one of the messages the tabs exchange, checked whole.

describe('tab channel messages', () => {
  it('takes the four messages, a status with leader false whatever it said', () => {
    expect(
      tabMessageOf({
        kind: 'status',
        status: { state: 'idle', pending: 2, leader: true, last_synced_at: 5 },
      }),
    ).toEqual({ kind: 'status', status: { state: 'idle', pending: 2, leader: false, last_synced_at: 5 } })
    expect(tabMessageOf({ kind: 'ask' })).toEqual({ kind: 'ask' })
    expect(tabMessageOf({ kind: 'flush', id: 'c_k2x9lq.7' })).toEqual({ kind: 'flush', id: 'c_k2x9lq.7' })
    expect(tabMessageOf({ kind: 'flushed', id: 'c_k2x9lq.7' })).toEqual({ kind: 'flushed', id: 'c_k2x9lq.7' })
  })

  it('ignores anything else: other shapes, unknown states, bad counts, ids out of bounds', () => {
    for (const data of [
      null,
      'idle',
      { state: 'idle', pending: 0, leader: true },
      { kind: 'status', status: { state: 'done', pending: 0 } },
      { kind: 'status', status: { state: 'idle', pending: -1 } },
      { kind: 'status', status: { state: 'idle', pending: 1.5 } },
      { kind: 'status', status: { state: 'idle', pending: 0, last_synced_at: 'now' } },
      { kind: 'status', status: { state: 'error', pending: 0, error: 42 } },
      { kind: 'flush' },
      { kind: 'flush', id: 'x'.repeat(65) },
      { kind: 'flushed', id: '../A' },
      { kind: 'lead' },
    ])
      expect(tabMessageOf(data)).toBeUndefined()
  })

  it("bounds another tab's error text", () => {
    const m = tabMessageOf({
      kind: 'status',
      status: { state: 'error', pending: 0, error: 'e'.repeat(5000) },
    })
    expect(m?.kind === 'status' && m.status.error?.length).toBe(1000)
  })
})
