import { beforeEach, describe, expect, it } from 'vitest'
import type { AgentMessage } from '@colloquy/core'
import {
  assistant,
  assistantCall,
  customEntry,
  finalAssistant,
  functionResult,
  rejects,
  text,
  user,
  type Harness,
} from '../harness.js'

type Tail = {
  messages: Array<{ entry_id: string; elided?: true; message?: unknown; custom?: unknown }>
  has_more: boolean
  oldest_entry_id?: string
}
const ids = (page: { messages: Array<{ entry_id: string }> }): string[] =>
  page.messages.map((m) => m.entry_id)
const span = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => `e_${String(from + i).padStart(3, '0')}`)

// pagination.feature (contract 7 items 4-5): messages-tail and messages-range; and D11, D12, D15.
export function paginationFeature(h: Harness): void {
  describe('pagination', () => {
    let s: string
    const add = (message: AgentMessage) => h.call('session::append', { session_id: s, message })
    const tail = (req: Record<string, unknown> = {}) =>
      h.call('session::messages-tail', { session_id: s, ...req }) as Promise<Tail>
    const range = (req: Record<string, unknown>) =>
      h.call('session::messages-range', { session_id: s, ...req })
    /** "a tool run of N calls named P": N call + result pairs. */
    const run = async (n: number, p = 'c') => {
      for (let i = 1; i <= n; i++) {
        await add(assistantCall(`${p}${i}`, 'shell::run'))
        await add(functionResult(`${p}${i}`))
      }
    }
    beforeEach(async () => {
      s = await h.bare()
    })

    it('131. the newest page comes first and pages walk backwards by block', async () => {
      await h.say(s, 'one')
      await run(1)
      await add(finalAssistant('done'))
      await h.say(s, 'two')
      await add(finalAssistant('done again'))
      const p1 = await tail({ limit: 2 })
      expect([ids(p1), p1.has_more, p1.oldest_entry_id]).toStrictEqual([['e_005', 'e_006'], true, 'e_005'])
      const p2 = await tail({ limit: 2, before_entry_id: 'e_005' })
      expect([ids(p2), p2.has_more, p2.oldest_entry_id]).toStrictEqual([
        ['e_002', 'e_003', 'e_004'],
        true,
        'e_002',
      ])
      const p3 = await tail({ limit: 2, before_entry_id: 'e_002' })
      expect([ids(p3), p3.has_more, p3.oldest_entry_id]).toStrictEqual([['e_001'], false, 'e_001'])
    })

    it('132. a tool run is never split across pages, whatever the limit', async () => {
      await h.say(s, 'go')
      await run(3)
      await add(finalAssistant('done'))
      expect(ids(await tail({ limit: 1 }))).toStrictEqual(['e_008'])
      const back = await tail({ limit: 1, before_entry_id: 'e_008' })
      expect([ids(back), back.has_more, back.oldest_entry_id]).toStrictEqual([span(2, 7), true, 'e_002'])
    })

    it('133. paging back to the root reproduces session::messages exactly', async () => {
      await h.say(s, 'q1')
      await run(2, 'a')
      await add(finalAssistant('answer'))
      await h.call('session::append', { session_id: s, custom: customEntry('compaction') })
      await h.say(s, 'q2')
      await add(assistant([text('prose')]))
      await run(3, 'b')
      await h.call('session::append', {
        session_id: s,
        message: { role: 'user', content: [text('ping')], timestamp: 0 },
        origin: { notification: true },
      })
      await run(1, 'c')
      await add(finalAssistant('end'))
      const all = (
        await h.call('session::messages', { session_id: s, include_custom: true, limit: 500 })
      ).messages.map((m) => m.entry_id)
      for (const limit of [1, 2, 50]) {
        const pages: string[][] = []
        let page = await tail({ limit })
        for (;;) {
          expect(page.messages.length).toBeGreaterThan(0)
          expect(page.oldest_entry_id).toBe(page.messages[0].entry_id)
          pages.unshift(ids(page))
          if (!page.has_more) break
          page = await tail({ limit, before_entry_id: page.oldest_entry_id })
        }
        expect(pages.flat(), `limit ${limit}`).toStrictEqual(all)
      }
    })

    it('134. inside a run only the last call and its result come back whole', async () => {
      await h.say(s, 'q')
      await add(assistantCall('c1', 'shell::run', 'step one'))
      await add(functionResult('c1'))
      await add(assistantCall('c2', 'shell::run'))
      await add(functionResult('c2'))
      await add(finalAssistant('final'))
      const items = (await tail()).messages
      expect(items).toHaveLength(6)
      expect('elided' in items[0]).toBe(false)
      expect(items[1]).toMatchObject({
        entry_id: 'e_002',
        elided: true,
        message: {
          role: 'assistant',
          stop_reason: 'function_call',
          content: [
            text('step one'),
            { type: 'function_call', id: 'c1', function_id: 'shell::run', arguments: {} },
          ],
        },
      })
      expect((items[1].message as { content: unknown[] }).content).toHaveLength(2)
      expect(items[2]).toStrictEqual({
        entry_id: 'e_003',
        elided: true,
        message: {
          role: 'function_result',
          function_call_id: 'c1',
          function_id: 'shell::run',
          content: [],
          details: null,
          is_error: false,
          timestamp: 0,
        },
      })
      expect(items[3]).toStrictEqual({ entry_id: 'e_004', message: assistantCall('c2', 'shell::run') })
      expect(items[4]).toStrictEqual({ entry_id: 'e_005', message: functionResult('c2') })
      expect('elided' in items[5]).toBe(false)
      const whole = (await h.call('session::messages', { session_id: s })).messages
      expect(whole[1].message).toStrictEqual(assistantCall('c1', 'shell::run', 'step one'))
      expect(whole[2].message).toStrictEqual(functionResult('c1'))
    })

    it('135. messages-range returns a span in full, in pages', async () => {
      await h.say(s, 'go')
      await run(3)
      await add(finalAssistant('done'))
      const p1 = await range({ from_entry_id: 'e_002', to_entry_id: 'e_007', limit: 4 })
      expect(ids(p1)).toStrictEqual(span(2, 5))
      expect(p1.messages.some((m) => 'elided' in m)).toBe(false)
      expect(p1.messages[0]).toStrictEqual({ entry_id: 'e_002', message: assistantCall('c1', 'shell::run') })
      expect(p1.next_cursor).toBeTypeOf('string')
      const p2 = await range({
        from_entry_id: 'e_002',
        to_entry_id: 'e_007',
        limit: 4,
        cursor: p1.next_cursor,
      })
      expect(ids(p2)).toStrictEqual(['e_006', 'e_007'])
      expect('next_cursor' in p2).toBe(false)
    })

    it('136. messages-range returns specific entries in path order', async () => {
      await h.say(s, 'go')
      await run(3)
      const res = await range({ entry_ids: ['e_006', 'e_002', 'e_006'] })
      expect(ids(res)).toStrictEqual(['e_002', 'e_006'])
      expect('next_cursor' in res).toBe(false)
    })

    it('137. messages-range rejects bad selections', async () => {
      await h.say(s, 'go')
      await run(3)
      await rejects(range({ from_entry_id: 'e_005', to_entry_id: 'e_002' }), 'session/invalid_request')
      await rejects(range({ from_entry_id: 'e_002' }), 'session/invalid_request')
      await rejects(range({ entry_ids: ['e_404'] }), 'session/entry_not_found')
      await rejects(
        h.call('session::messages-range', { session_id: 's_404', entry_ids: ['e_001'] }),
        'session/not_found',
      )
      await rejects(range({}), 'session/invalid_request')
      await rejects(
        range({ entry_ids: ['e_002'], from_entry_id: 'e_001', to_entry_id: 'e_002' }),
        'session/invalid_request',
      )
      await rejects(range({ entry_ids: ['e_002'], cursor: '!!garbage!!' }), 'session/invalid_cursor')
    })

    it("138. until_entry_id widens the page back to the target's block", async () => {
      await h.say(s, 'go')
      await run(2)
      await add(finalAssistant('done'))
      await h.say(s, 'next')
      await add(finalAssistant('done again'))
      const wide = await tail({ limit: 1, until_entry_id: 'e_003' })
      expect([ids(wide), wide.has_more]).toStrictEqual([span(2, 8), true])
      const narrow = await tail({ limit: 2, until_entry_id: 'e_008' })
      expect(ids(narrow)).toStrictEqual(['e_007', 'e_008'])
    })

    it('139. anchors off the active path are rejected as stale cursors', async () => {
      await h.say(s, 'one')
      await h.say(s, 'two')
      await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_001' })
      await rejects(tail({ before_entry_id: 'e_002' }), 'session/invalid_cursor')
      await rejects(tail({ until_entry_id: 'e_002' }), 'session/invalid_cursor')
      await rejects(tail({ before_entry_id: 'e_404' }), 'session/invalid_cursor')
      await rejects(range({ entry_ids: ['e_002'] }), 'session/invalid_cursor')
      await rejects(range({ from_entry_id: 'e_001', to_entry_id: 'e_002' }), 'session/invalid_cursor')
      await rejects(h.call('session::messages-tail', { session_id: 's_404' }), 'session/not_found')
    })

    it('140. custom entries are included by default and can be dropped', async () => {
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, custom: customEntry('compaction') })
      await add(finalAssistant('two'))
      const all = await tail()
      expect(all.messages).toHaveLength(3)
      expect(all.messages[1]).toStrictEqual({ entry_id: 'e_002', custom: customEntry('compaction') })
      expect(ids(await tail({ include_custom: false }))).toStrictEqual(['e_001', 'e_003'])
      // A custom entry is not on the filtered path when dropped.
      await rejects(tail({ include_custom: false, before_entry_id: 'e_002' }), 'session/invalid_cursor')
    })

    it('141. both readers honour include_image_data', async () => {
      const png = 'iVBORw0KGgo='
      await h.call('session::put-attachment', { session_id: s, name: 'p.png', mime: 'image/png', data: png })
      const image = { type: 'image' as const, mime: 'image/png', data: png, attachment_id: 'a_001' }
      await add({ role: 'user', content: [image], timestamp: 0 })
      const lean = { ...image, data: '' }
      expect((await tail({ include_image_data: false })).messages[0]).toMatchObject({
        message: { content: [lean] },
      })
      expect((await range({ entry_ids: ['e_001'], include_image_data: false })).messages[0]).toMatchObject({
        message: { content: [lean] },
      })
      expect((await range({ entry_ids: ['e_001'] })).messages[0]).toMatchObject({
        message: { content: [image] },
      })
      expect((await tail()).messages[0]).toMatchObject({ message: { content: [image] } })
    })

    it('142. an empty session has an empty newest page', async () => {
      expect(await tail()).toStrictEqual({ messages: [], has_more: false })
    })

    it('D11. messages-tail: before_entry_id inside a run excludes the whole run from the page', async () => {
      await h.say(s, 'go')
      await run(3)
      await add(finalAssistant('done'))
      const page = await tail({ limit: 5, before_entry_id: 'e_004' })
      expect([ids(page), page.has_more]).toStrictEqual([['e_001'], false])
    })

    it('D12. elision of an agent_trigger call keeps only a short function and the first 120 chars of description', async () => {
      const description = 'd'.repeat(119) + 'é' + 'tail beyond the cut'
      const call = (id: string, args: unknown) =>
        assistant(
          [{ type: 'function_call', id, function_id: 'agent_trigger', arguments: args as never }],
          'function_call',
        )
      await h.say(s, 'go')
      await add(call('t1', { function: 'worker::summarize', description, payload: { big: 'x'.repeat(500) } }))
      await add(functionResult('t1', 'agent_trigger'))
      await add(call('t2', { function: 'f'.repeat(257), description: 'short', extra: 1 }))
      await add(functionResult('t2', 'agent_trigger'))
      await add(call('t3', { cmd: 'last' }))
      await add(functionResult('t3', 'agent_trigger'))
      const items = (await tail()).messages
      const argsOf = (i: number) =>
        (items[i].message as { content: Array<{ arguments: unknown }> }).content[0].arguments
      expect(argsOf(1)).toStrictEqual({ function: 'worker::summarize', description: 'd'.repeat(119) + 'é' })
      expect(argsOf(3)).toStrictEqual({ description: 'short' })
      expect(argsOf(5)).toStrictEqual({ cmd: 'last' })
    })

    it('D15. messages-range with entry_ids [] returns [] and no cursor; to_entry_id alone is invalid', async () => {
      await h.say(s, 'one')
      expect(await range({ entry_ids: [] })).toStrictEqual({ messages: [] })
      await rejects(range({ to_entry_id: 'e_001' }), 'session/invalid_request')
    })

    it('7.4 a wake entry joins the run and is kept whole; a user prompt breaks it', async () => {
      await h.say(s, 'go')
      await add(assistantCall('c1', 'shell::run'))
      await add(functionResult('c1'))
      await h.call('session::append', {
        session_id: s,
        entry_id: 'e_notify_1',
        message: user('build finished'),
      })
      await add(assistantCall('c2', 'shell::run'))
      await add(functionResult('c2'))
      await h.say(s, 'thanks')
      const page = await tail({ limit: 1, before_entry_id: 'e_006' })
      expect(ids(page)).toStrictEqual(['e_002', 'e_003', 'e_notify_1', 'e_004', 'e_005'])
      expect(page.messages.map((m) => m.elided === true)).toStrictEqual([true, true, false, false, false])
    })
  })
}
