import type { AgentMessage, SessionEntry } from '@colloquy/core'

// The search corpus, from the sample transcripts' texts (`search-samples.mjs`): the same in Node
// (SEARCH) and in Chromium (SEARCH_IDB), given the same texts and the same seeded random.

/** Messages per session. */
export const PER_SESSION = 100

/**
 * Session `s`'s messages: texts drawn at random, each with a session number mixed in so copies
 * differ, users and assistants alternating.
 */
export function corpusSession(texts: readonly string[], random: () => number, s: number): AgentMessage[] {
  const messages: AgentMessage[] = []
  for (let i = 0; i < PER_SESSION; i++) {
    // Flat, as a message read from storage or the network is (a template literal is a rope,
    // which the first regular expression to read it flattens into a copy: the store's text
    // would be counted as the index's memory).
    const text = JSON.parse(
      JSON.stringify(`${texts[Math.floor(random() * texts.length)]} ref${s}x${i % 7}`),
    ) as string
    messages.push(
      i % 2
        ? {
            role: 'assistant',
            content: [{ type: 'text', text }],
            timestamp: s * 1000 + i,
            stop_reason: 'end',
            model: 'm',
            provider: 'p',
          }
        : { role: 'user', content: [{ type: 'text', text }], timestamp: s * 1000 + i },
    )
  }
  return messages
}

export interface CorpusQuery {
  query: string
  prefix: boolean
}

/** `n` queries: 1-3 words of 4+ letters from random texts, every fourth a 3-letter prefix. */
export function corpusQueries(texts: readonly string[], random: () => number, n: number): CorpusQuery[] {
  const queries: CorpusQuery[] = []
  while (queries.length < n) {
    const words = texts[Math.floor(random() * texts.length)]!.toLowerCase().match(/[a-z]{4,}/g)
    if (!words || words.length < 3) continue
    const k = queries.length % 4
    const at = Math.floor(random() * (words.length - 2))
    queries.push(
      k === 3
        ? { query: words[at]!.slice(0, 3), prefix: true }
        : { query: words.slice(at, at + k + 1).join(' '), prefix: false },
    )
  }
  return queries
}

/** A stored entry's text, as the brute-force scans read it. */
export const entryText = (e: SessionEntry): string =>
  e.kind === 'message' ? e.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') : ''
