import type { AgentMessage, SessionEntry, SessionMeta } from '@colloquy/core'
import { seeded } from '../../../examples/chat-kit/src/random.js'

/**
 * The records every subject writes: SessionEntry-shaped messages of realistic size (200-500
 * characters of text), generated deterministically so every subject and every run gets the same
 * bytes.
 */

const WORDS = (
  'the a of to and in is that for it on with as this be are by from at or an was can will not ' +
  'function result message assistant user tool session branch store index query cache commit ' +
  'stream token render update value error retry network offline browser request response model'
).split(' ')

/** The demo model's seeded PRNG (mulberry32): same seed, same data, in every subject. */
export const rng = seeded

export function text(random: () => number, min = 200, max = 500): string {
  const length = min + Math.floor(random() * (max - min))
  let out = ''
  while (out.length < length) out += (out ? ' ' : '') + WORDS[Math.floor(random() * WORDS.length)]
  return out.slice(0, length)
}

const T0 = 1_700_000_000_000

/** Message `i` of a conversation: users and assistants alternate. */
export function message(i: number, random: () => number): AgentMessage {
  const timestamp = T0 + i * 1000
  const content = [{ type: 'text' as const, text: text(random) }]
  if (i % 2 === 0) return { role: 'user', content, timestamp }
  return {
    role: 'assistant',
    content,
    timestamp,
    model: 'bench-model-1',
    provider: 'bench',
    stop_reason: 'end',
    usage: { input: 120 + i, output: 80 },
  }
}

export const entryId = (i: number): string => `e_${String(i).padStart(6, '0')}`

/** `n` messages in one chain, as bare messages (what a caller hands to `append`). */
export function messages(n: number, seed = 1): AgentMessage[] {
  const random = rng(seed)
  return Array.from({ length: n }, (_, i) => message(i, random))
}

/** `n` entries in one parent chain, ids `e_000000`, … */
export function chain(n: number, seed = 1, from = 0): SessionEntry[] {
  return messages(n, seed).map((message, k) => {
    const i = from + k
    return {
      id: entryId(i),
      parent_id: i === from ? null : entryId(i - 1),
      timestamp: T0 + i * 1000,
      revision: 0,
      kind: 'message',
      message,
    }
  })
}

export interface BenchSession {
  meta: SessionMeta
  entries: SessionEntry[]
  active_leaf: string
}

export function meta(session_id: string, message_count: number): SessionMeta {
  return {
    session_id,
    title: 'bench',
    description: '',
    status: 'idle',
    kind: 'user',
    created_at: T0,
    updated_at: T0,
    message_count,
  }
}

/**
 * `n` entries in a trunk plus `branches` branches, each forking from an earlier entry (an edited
 * or regenerated message) and continuing to the end of its share; the active leaf is the end of
 * the last branch, the way a chat UI leaves it after a regeneration.
 */
export function branchedSession(session_id: string, n = 10_000, branches = 20, seed = 7): BenchSession {
  const random = rng(seed)
  const share = Math.floor(n / (branches + 1))
  const entries: SessionEntry[] = []
  let leaf = ''
  for (let b = 0; b <= branches; b++) {
    const count = b === branches ? n - entries.length : share
    // A branch forks from a random entry made so far (the trunk starts at the root).
    let parent: string | null = b === 0 ? null : entries[Math.floor(random() * entries.length)]!.id
    for (let k = 0; k < count; k++) {
      const i = entries.length
      const e: SessionEntry = {
        id: entryId(i),
        parent_id: parent,
        timestamp: T0 + i * 1000,
        revision: 0,
        kind: 'message',
        message: message(i, random),
      }
      entries.push(e)
      parent = e.id
    }
    leaf = parent!
  }
  return { meta: meta(session_id, n), entries, active_leaf: leaf }
}
