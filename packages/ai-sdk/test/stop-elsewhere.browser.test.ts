import { describe, expect, it } from 'vitest'
import type { UIMessage } from 'ai'
import { until } from '../../../test/support/streaming.js'
import { twoTabChats } from './two-tabs.js'

const textOf = (m: UIMessage): string => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')

describe('Stop in a tab that is not writing the reply', () => {
  it("ends the other tab's reply as stopped, and this tab's own next reply ends done, not stopped", async () => {
    const { db, a, b, sid, hold, chatA, chatB } = await twoTabChats('aisdk-stop-elsewhere', 2, 3)
    void chatA.sendMessage({ text: 'from A' })
    await until(() => chatB.status === 'streaming' && textOf(chatB.messages.at(-1)!) === 't0 t1')
    await chatB.stop()
    await until(() => chatA.status === 'ready')
    hold.open()
    await until(() => chatB.status === 'ready' && chatB.messages.length === 2)
    await a.flush()
    expect((await b.get({ session_id: sid }))!.meta).toMatchObject({
      status: 'done',
      status_reason: 'stopped',
    })

    // B writes a reply of its own, to the end: nobody stopped it.
    await chatB.sendMessage({ text: 'from B' })
    await until(() => chatB.status === 'ready' && chatB.messages.length === 4)
    await chatB.flush()
    const meta = (await b.get({ session_id: sid }))!.meta
    expect(meta.status).toBe('done')
    expect(meta.status_reason).toBeUndefined()
    expect(textOf(chatB.messages.at(-1)!)).toBe('t0 t1 t2')
    for (const c of [chatA, chatB]) c.close()
    await a.close()
    await b.close()
    db.drop()
  })
})
