import type { SessionEntry, SessionMeta } from '@colloquy/core'
import { message, rng } from './data.js'

/**
 * A chat history of many sessions (W9): every session a short exchange (a user message and the
 * answer, 200-500 characters each), and one longer chat, the most recently updated, which an app
 * opens first. Generated deterministically, so every subject gets the same records, and in
 * ranges, so a history can grow size by size in place.
 */

const T0 = 1_700_000_000_000
/** updated_at is a permutation of the session numbers (a prime above the largest history): list order is not key order. */
const SPREAD = 100_003
/** Messages of each session of the history. */
export const EXCHANGE = 2
/** The chat opened first: newer than every other session, with more than a screen of messages. */
export const CHAT = 's_chat'
export const CHAT_MESSAGES = 120

export interface HistorySession {
  meta: SessionMeta
  entries: SessionEntry[]
  active_leaf: string
}

const sessionId = (i: number): string => `s_${String(i).padStart(6, '0')}`

function session(
  session_id: string,
  n: number,
  created_at: number,
  updated_at: number,
  seed: number,
): HistorySession {
  const random = rng(seed)
  const entries: SessionEntry[] = []
  for (let k = 0; k < n; k++)
    entries.push({
      id: `e_${String(k).padStart(4, '0')}`,
      parent_id: k === 0 ? null : entries[k - 1]!.id,
      timestamp: created_at + k,
      revision: 0,
      kind: 'message',
      message: message(k, random),
    })
  const meta: SessionMeta = {
    session_id,
    title: `chat ${session_id}`,
    description: '',
    status: 'idle',
    kind: 'user',
    created_at,
    updated_at,
    message_count: n,
  }
  return { meta, entries, active_leaf: entries.at(-1)!.id }
}

/** Sessions number `from` to `to` (excluded) of the history. */
export function historyRange(from: number, to: number): HistorySession[] {
  const out: HistorySession[] = []
  for (let i = from; i < to; i++)
    out.push(session(sessionId(i), EXCHANGE, T0 + i, T0 + SPREAD + ((i * 7919) % SPREAD) * 1000, i + 1))
  return out
}

/** The chat opened first (written once, before the history). */
export const chat = (): HistorySession => session(CHAT, CHAT_MESSAGES, T0, T0 + SPREAD * 1001, 0)
