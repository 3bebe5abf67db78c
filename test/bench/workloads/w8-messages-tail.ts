import type { AgentMessage, SessionEntry } from '@colloquy/core'
import type { Workload } from '../types.js'
import { openColloquy } from '../subjects/colloquy.js'
import { text, rng } from '../subjects/data.js'
import { median, now } from '../subjects/measure.js'
import { inFreshRealm } from '../subjects/realm.js'

const N = 10_000
const RUN = 40 // calls per tool run: 80 entries
const ROUNDS = 5
const SID = 's_w8'

/** A 10,000-entry agent session: a prompt, a run of 40 calls and results, a final answer, repeated. */
function agentSession(): SessionEntry[] {
  const random = rng(8)
  const out: SessionEntry[] = []
  let parent: string | null = null
  const add = (message: AgentMessage): void => {
    const id = `e_${String(out.length).padStart(6, '0')}`
    out.push({ id, parent_id: parent, timestamp: out.length, revision: 0, kind: 'message', message })
    parent = id
  }
  const assistant = (content: AgentMessage['content'], stop: 'end' | 'function_call'): AgentMessage => ({
    role: 'assistant',
    content,
    stop_reason: stop,
    model: 'm',
    provider: 'p',
    timestamp: 0,
  })
  while (out.length < N) {
    add({ role: 'user', content: [{ type: 'text', text: text(random, 50, 200) }], timestamp: 0 })
    for (let c = 0; c < RUN && out.length < N - 2; c++) {
      const id = `call_${out.length}`
      add(
        assistant(
          [
            { type: 'thinking', text: text(random) },
            {
              type: 'function_call',
              id,
              function_id: 'shell::run',
              arguments: { cmd: text(random, 20, 80) },
            },
          ],
          'function_call',
        ),
      )
      add({
        role: 'function_result',
        function_call_id: id,
        function_id: 'shell::run',
        content: [{ type: 'text', text: text(random, 200, 1500) }],
        details: { code: 0 },
        is_error: false,
        timestamp: 0,
      })
    }
    if (out.length < N) add(assistant([{ type: 'text', text: text(random) }], 'end'))
  }
  return out.slice(0, N)
}

/** In a fresh realm: open the store and read the first screen, one way or the other. */
export async function firstScreen(
  name: string,
  how: 'tail' | 'messages',
): Promise<{ ms: number; items: number; bytes: number }> {
  const t0 = now()
  const store = await openColloquy(name)
  let items: unknown[] = []
  if (how === 'tail') items = (await store.messagesTail({ session_id: SID, limit: 20 })).messages
  else {
    // The whole path, paged as session::messages allows (500 a page).
    let cursor: string | undefined
    do {
      const page = await store.messages({ session_id: SID, limit: 500, ...(cursor && { cursor }) })
      items.push(...page.messages)
      cursor = page.next_cursor
    } while (cursor)
  }
  const ms = now() - t0
  const bytes = JSON.stringify(items).length
  await store.close()
  return { ms, items: items.length, bytes }
}

/**
 * W8: opening a 10,000-entry agent session (runs of 40 calls) on its newest exchanges:
 * `messagesTail({ limit: 20 })` (runs collapsed) against `messages` of the whole path, each from
 * a cold open in a fresh realm (store opened, entries read, first screen built); time, items and
 * JSON size of what is returned. Median of 5, interleaved.
 */
const w8: Workload = {
  id: 'W8',
  title: 'messagesTail on a 10,000-entry agent session vs messages of the whole path',
  env: 'browser',
  async run(ctx) {
    const name = ctx.dbName('w8')
    const store = await openColloquy(name)
    const entries = agentSession()
    const meta = {
      session_id: SID,
      title: 'agent',
      description: '',
      status: 'idle' as const,
      kind: 'user' as const,
      created_at: 0,
      updated_at: N,
      message_count: N,
    }
    await store.importSession({ meta, entries, active_leaf: entries[entries.length - 1].id })
    await store.close()
    const tail: Array<{ ms: number; items: number; bytes: number }> = []
    const whole: typeof tail = []
    for (let r = 0; r < ROUNDS; r++) {
      for (const how of r % 2 ? (['messages', 'tail'] as const) : (['tail', 'messages'] as const)) {
        const res = await inFreshRealm<{ ms: number; items: number; bytes: number }>(
          import.meta.url,
          'firstScreen',
          name,
          how,
        )
        ;(how === 'tail' ? tail : whole).push(res)
        ctx.log(`  ${how} round ${r + 1}/${ROUNDS}: ${res.ms.toFixed(1)} ms, ${res.items} items`)
      }
    }
    const t = median(tail.map((x) => x.ms))
    const w = median(whole.map((x) => x.ms))
    return [
      {
        id: 'W8',
        subject: 'messages (whole path)',
        metric: 'cold open to first screen',
        value: w,
        unit: 'ms',
        better: 'lower',
        note: `${whole[0].items} items, ${(whole[0].bytes / 1e6).toFixed(1)} MB JSON; ${N / 500} pages of 500`,
      },
      {
        id: 'W8',
        subject: 'messagesTail 20',
        metric: 'cold open to first screen',
        value: t,
        unit: 'ms',
        better: 'lower',
        baseline: 'messages (whole path)',
        note: `${tail[0].items} items (${(tail[0].bytes / 1e3).toFixed(0)} kB JSON): the newest 20 blocks, runs collapsed`,
      },
      {
        id: 'W8',
        subject: 'messagesTail 20',
        metric: 'items returned',
        value: tail[0].items,
        unit: 'items',
        better: 'lower',
        baseline: 'messages (whole path)',
      },
      {
        id: 'W8',
        subject: 'messages (whole path)',
        metric: 'items returned',
        value: whole[0].items,
        unit: 'items',
        better: 'lower',
      },
    ]
  },
}

export default w8
