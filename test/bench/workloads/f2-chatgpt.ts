import type { BenchContext, BenchRow, Workload } from '../types.js'
import { measureImport, prose as proseOf } from '../subjects/import-run.js'

// F2: import a ChatGPT `conversations.json` of 2,000 conversations into IndexedDB through
// @colloquy/formats. Each conversation repeats the structure of
// samples/chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json (13 mapping nodes: a
// `message:null` root, a hidden empty system message, 5 user and 6 assistant messages, an
// edited prompt and a regenerated reply as two forks, an interrupted reply on the dropped
// branch, `current_node` on the regenerated one) with fresh ids and texts of the same sizes.

const CONVERSATIONS = 2000
const TARGET_CONVERSATIONS_PER_S = 100
const HEAP_FACTOR = 3

const WORDS = [
  'sure',
  'story',
  'joke',
  'welcome',
  'back',
  'what',
  'brings',
  'you',
  'here',
  'today',
  'hello',
  'assist',
  'cool',
  'again',
  'once',
]
const prose = (n: number, seed: number): string => proseOf(WORDS, n, seed)

/** One conversation shaped like the sample, ids derived from `k`. */
function conversation(k: number, t0: number): object {
  const id = (n: number): string =>
    `${k.toString(16).padStart(8, '0')}-${n.toString(16).padStart(4, '0')}-4000-8000-${(k * 13 + n).toString(16).padStart(12, '0')}`
  const mapping: Record<string, object> = {}
  const node = (n: number, parent: number | null, children: number[], message: object | null): void => {
    mapping[id(n)] = {
      id: id(n),
      message,
      parent: parent === null ? null : id(parent),
      children: children.map(id),
    }
  }
  const msg = (n: number, role: string, text: string, i: number, extra: object = {}) => ({
    id: id(n),
    author: { role, name: null, metadata: {} },
    create_time: t0 / 1000 + i,
    update_time: null,
    content: { content_type: 'text', parts: [text] },
    status: 'finished_successfully',
    end_turn: role === 'assistant' ? true : null,
    weight: 1,
    metadata: role === 'assistant' ? { model_slug: 'gpt-4o', finish_details: { type: 'stop' } } : {},
    recipient: 'all',
    ...extra,
  })
  node(0, null, [1], null)
  node(1, 0, [2], msg(1, 'system', '', 0, { metadata: { is_visually_hidden_from_conversation: true } }))
  node(2, 1, [3], msg(2, 'user', prose(8, k), 1))
  node(3, 2, [4, 7], msg(3, 'assistant', prose(34, k), 2))
  node(4, 3, [5], msg(4, 'user', prose(11, k + 1), 3))
  node(5, 4, [6], msg(5, 'assistant', prose(35, k + 2), 4))
  node(6, 5, [12], msg(6, 'user', prose(15, k + 3), 5))
  node(
    12,
    6,
    [],
    msg(12, 'assistant', prose(900, k + 4), 6, {
      status: 'in_progress',
      metadata: { model_slug: 'gpt-4o', finish_details: { type: 'interrupted' } },
    }),
  )
  node(7, 3, [8], msg(7, 'user', prose(8, k + 5), 7))
  node(8, 7, [9], msg(8, 'assistant', prose(39, k + 6), 8))
  node(9, 8, [10, 11], msg(9, 'user', prose(14, k + 7), 9))
  node(10, 9, [], msg(10, 'assistant', prose(120, k + 8), 10))
  node(11, 9, [], msg(11, 'assistant', prose(120, k + 9), 11))
  return {
    title: prose(24, k),
    create_time: t0 / 1000,
    update_time: t0 / 1000 + 12,
    mapping,
    moderation_results: [],
    current_node: id(11),
    plugin_ids: null,
    conversation_id: id(99),
    conversation_template_id: null,
    gizmo_id: null,
    is_archived: false,
    safe_urls: [],
    default_model_slug: 'gpt-4o',
    id: id(99),
  }
}

/** The export as a Blob of JSON text (one document, as ChatGPT writes it) plus its counts. */
export function generateChatGptExport(conversations: number): {
  blob: Blob
  bytes: number
  conversations: number
  entries: number
} {
  const parts: string[] = ['[']
  let bytes = 1
  const t0 = Date.UTC(2024, 4, 1)
  for (let k = 0; k < conversations; k++) {
    const text = `${k ? ',' : ''}${JSON.stringify(conversation(k, t0 + k * 60_000))}`
    parts.push(text)
    bytes += text.length
  }
  parts.push(']')
  // 13 nodes, each one entry (the null root is the session's thread_root).
  return {
    blob: new Blob(parts, { type: 'application/json' }),
    bytes: bytes + 1,
    conversations,
    entries: conversations * 13,
  }
}

/** Runs F2 with `conversations` conversations (the bench uses 2,000; a browser test runs it small). */
export async function runF2(ctx: BenchContext, conversations = CONVERSATIONS): Promise<BenchRow[]> {
  const file = generateChatGptExport(conversations)
  const mb = file.bytes / 1024 / 1024
  const { ms, readMs, sessions, entries, base, peak } = await measureImport(ctx, 'f2', file.blob)
  ctx.log(
    `F2: ${mb.toFixed(1)} MB ChatGPT export, ${sessions} conversations, ${entries} entries in ${ms.toFixed(0)} ms (read+parse ${readMs.toFixed(0)} ms); heap base ${(base / 2 ** 20).toFixed(1)} MB, peak ${(peak / 2 ** 20).toFixed(1)} MB`,
  )
  const perS = sessions / (ms / 1000)
  const peakMb = peak / 2 ** 20
  return [
    {
      id: 'F2',
      subject: 'colloquy',
      metric: 'time',
      value: Math.round(ms),
      unit: 'ms',
      note: `${mb.toFixed(1)} MB ChatGPT conversations.json, ${sessions} conversations, ${entries} entries`,
    },
    {
      id: 'F2',
      subject: 'colloquy',
      metric: 'conversations/s',
      value: Math.round(perS),
      unit: 'conversations/s',
      target: `>= ${TARGET_CONVERSATIONS_PER_S}`,
      pass: perS >= TARGET_CONVERSATIONS_PER_S,
    },
    {
      id: 'F2',
      subject: 'colloquy',
      metric: 'peak heap',
      value: Math.round(peakMb * 10) / 10,
      unit: 'MB',
      target: `< ${HEAP_FACTOR}x file + base (${(HEAP_FACTOR * mb + base / 2 ** 20).toFixed(0)} MB)`,
      pass: peak > 0 && peakMb < HEAP_FACTOR * mb + base / 2 ** 20,
      note:
        peak > 0
          ? `usedJSHeapSize sampled every 5 ms; ${(base / 2 ** 20).toFixed(1)} MB before the import`
          : 'performance.memory is not available here',
    },
  ]
}

const workload: Workload = {
  id: 'F2',
  title: 'Import a ChatGPT export of 2,000 conversations into IndexedDB',
  env: 'browser',
  run: (ctx) => runF2(ctx),
}
export default workload
