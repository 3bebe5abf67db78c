import type { Store } from '@colloquy/core'
import { createThread } from '@colloquy/parts'
import { ColloquyChat } from '../src/index.js'
import { gate, tabs, type Gate } from '../../../test/support/streaming.js'
import { tokenTransport } from './transport.js'

/**
 * Two tabs (stores `a` and `b` on one new database named after `name`) on one new thread `sid`:
 * tab A's chat streams 6 tokens and holds before token `holdAt` until `hold` opens; tab B's
 * streams `bTokens`. Both chats are ready.
 */
export async function twoTabChats(
  name: string,
  holdAt: number,
  bTokens: number,
): Promise<{
  db: ReturnType<typeof tabs>
  a: Store
  b: Store
  sid: string
  hold: Gate
  chatA: ColloquyChat
  chatB: ColloquyChat
}> {
  const db = tabs(name)
  const a = await db.open()
  const b = await db.open()
  const sid = await createThread(a)
  const hold = gate()
  const chatA = new ColloquyChat({
    store: a,
    session_id: sid,
    transport: tokenTransport(6, { hold, holdAt }),
  })
  const chatB = new ColloquyChat({ store: b, session_id: sid, transport: tokenTransport(bTokens) })
  await Promise.all([chatA.ready, chatB.ready])
  return { db, a, b, sid, hold, chatA, chatB }
}
