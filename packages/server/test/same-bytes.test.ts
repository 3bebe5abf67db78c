import { createStore, memoryStorage, type SessionMeta, type Store } from '@colloquy/core'
import { encodeBase64, sha256Hex, WorkMeter } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import { findSameBytes } from '../src/http/same-bytes.js'
import { WORK_BUDGETS } from '../src/work.js'

// The sync upload's `reuse=1` search: a unit of work per session and per attachment looked at,
// counted on a meter; past its budget it finds nothing (the client then sends the bytes).

async function storeWith(
  sessions: number,
  attachmentsEach: number,
): Promise<{ store: Store; owner: Map<string, string> }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const owner = new Map<string, string>()
  for (let i = 0; i < sessions; i++) {
    const session_id = `s${i}`
    await store.ensure({ session_id })
    owner.set(session_id, i % 2 === 0 ? 'alice' : 'bob')
    for (let k = 0; k < attachmentsEach; k++)
      await store.putAttachment({
        session_id,
        name: 'a.txt',
        mime: 'text/plain',
        data: encodeBase64(new TextEncoder().encode(`${i}/${k}`)),
      })
  }
  return { store, owner }
}

const sha = async (text: string): Promise<string> => sha256Hex(new TextEncoder().encode(text))

describe('reuse=1: the search for the same bytes', () => {
  it("finds the bytes in the session itself first, then in another of the caller's; never in someone else's", async () => {
    const { store, owner } = await storeWith(6, 2)
    const alice = (meta: SessionMeta): boolean => owner.get(meta.session_id) === 'alice'
    const meter = (): WorkMeter => new WorkMeter(WORK_BUDGETS.reuse)
    expect(await findSameBytes(store, alice, undefined, 's4', await sha('4/1'), meter())).toMatchObject({
      session_id: 's4',
    })
    expect(await findSameBytes(store, alice, undefined, 's0', await sha('2/0'), meter())).toMatchObject({
      session_id: 's2',
    })
    // s3 is Bob's.
    expect(await findSameBytes(store, alice, undefined, 's0', await sha('3/0'), meter())).toBeUndefined()
  })

  it('counts a unit per session and per attachment looked at, and stops at its budget', async () => {
    const { store, owner } = await storeWith(40, 3)
    const alice = (meta: SessionMeta): boolean => owner.get(meta.session_id) === 'alice'
    // Bytes nobody has: every session is looked at (41 with the session itself), and the 20 of
    // Alice's, 21 with s0 looked at first, each with 3 attachments.
    const whole = new WorkMeter(Number.MAX_SAFE_INTEGER)
    expect(await findSameBytes(store, alice, undefined, 's0', 'f'.repeat(64), whole)).toBeUndefined()
    expect(whole.spent).toBe(41 + 21 * 3)
    // The same search on a budget smaller than that stops within it, and Alice's last session
    // (s38) is not reached: no answer, the client sends the bytes.
    const small = new WorkMeter(100)
    expect(await findSameBytes(store, alice, undefined, 's0', await sha('38/2'), small)).toBeUndefined()
    expect(small.spent).toBeLessThanOrEqual(100)
    expect(
      await findSameBytes(
        store,
        alice,
        undefined,
        's0',
        await sha('38/2'),
        new WorkMeter(WORK_BUDGETS.reuse),
      ),
    ).toMatchObject({ session_id: 's38' })
  })
})
