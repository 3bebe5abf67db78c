import fc from 'fast-check'
import type { ContentBlock, Json, SessionEntry, SessionTree } from '@colloquy/core'
import { blocksToParts, THREAD_ROOT, type NeutralPart } from '@colloquy/parts'
import { SIDECAR } from '../../packages/parts/src/nodes.js'

// Random sessions for the mapping's round-trip properties: chains of user, assistant and
// custom-role messages with every block type, result entries answering calls, sidecars holding
// framework-only parts, and hidden custom entries.

/** JSON without -0 (JSON itself cannot tell it from 0). */
const json = (): fc.Arbitrary<Json> =>
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as Json)
const b64 = fc.base64String({ maxLength: 24 })
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', ' ', '\n'))

const textBlock = text.map((t): ContentBlock => ({ type: 'text', text: t }))
const thinking = fc
  .record({ t: text, sig: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }) })
  .map(({ t, sig }): ContentBlock =>
    sig === undefined ? { type: 'thinking', text: t } : { type: 'thinking', text: t, signature: sig },
  )
const image = fc
  .record({
    mime: fc.constantFrom('image/png', 'image/jpeg', 'application/octet-stream'),
    data: b64,
    att: fc.option(fc.constantFrom('a_1', 'a_2'), { nil: undefined }),
  })
  .map(({ mime, data, att }): ContentBlock =>
    att === undefined ? { type: 'image', mime, data } : { type: 'image', mime, data, attachment_id: att },
  )
const file = fc
  .record({
    att: fc.constantFrom('a_1', 'a_9'),
    name: fc.string({ maxLength: 8 }),
    mime: fc.constantFrom('text/plain', 'application/pdf'),
    size: fc.nat(9999),
  })
  .map(({ att, name, mime, size }): ContentBlock => ({ type: 'file', attachment_id: att, name, mime, size }))
const resultContent = fc.oneof(
  textBlock.map((b) => [b]),
  fc.array(fc.oneof(textBlock, image), { maxLength: 2 }),
)

/** The extras a framework message may carry that Colloquy keeps beside the message. */
const extra = fc.oneof(
  fc
    .record({ name: fc.constantFrom('weather', 'notice'), data: json() })
    .map(({ name, data }): NeutralPart => ({ type: 'extra', part: { type: `data-${name}`, data } })),
  fc
    .record({ id: fc.string({ minLength: 1, maxLength: 5 }), url: fc.webUrl() })
    .map(({ id, url }): NeutralPart => ({ type: 'extra', part: { type: 'source-url', sourceId: id, url } })),
  fc.constant<NeutralPart>({ type: 'extra', part: { type: 'step-start' } }),
)

interface Turn {
  role: 'user' | 'assistant' | 'custom'
  content: ContentBlock[]
  results: { call: string; fn: string; content: ContentBlock[]; is_error: boolean; details: Json }[]
  /** Extras kept beside the message, with offsets (0…parts) that place them among its parts. */
  sidecar: { extras: NeutralPart[]; offsets: number[]; metadata?: Json } | null
  hidden: boolean
}

let calls = 0
const assistantContent = fc
  .array(
    fc.oneof(
      textBlock.map((b) => [b]),
      thinking.map((b) => [b]),
      image.map((b) => [b]),
      fc
        .record({
          fn: fc.constantFrom('calc::eval', 'clock::now', 'web'),
          args: json(),
          inline: fc.option(
            fc.record({ content: resultContent, flag: fc.constantFrom(undefined, true, false) }),
            { nil: undefined },
          ),
        })
        .map(({ fn, args, inline }): ContentBlock[] => {
          const id = `call_${++calls}`
          const call: ContentBlock = { type: 'function_call', id, function_id: fn, arguments: args }
          if (!inline) return [call]
          const result: ContentBlock =
            inline.flag === undefined
              ? { type: 'function_result', function_call_id: id, content: inline.content }
              : {
                  type: 'function_result',
                  function_call_id: id,
                  content: inline.content,
                  is_error: inline.flag,
                }
          return [call, result]
        }),
    ),
    { maxLength: 5 },
  )
  .map((xs) => xs.flat())

const turn: fc.Arbitrary<Turn> = fc
  .record({
    role: fc.constantFrom<Turn['role']>('user', 'assistant', 'assistant', 'custom'),
    user: fc.array(fc.oneof(textBlock, image, file), { maxLength: 3 }),
    assistant: assistantContent,
    answer: fc.array(fc.record({ content: resultContent, is_error: fc.boolean(), details: json() }), {
      maxLength: 3,
    }),
    extras: fc.array(extra, { maxLength: 3 }),
    offsets: fc.array(fc.nat(6), { minLength: 3, maxLength: 3 }),
    metadata: fc.option(json(), { nil: undefined }),
    sidecar: fc.boolean(),
    hidden: fc.boolean(),
  })
  .map(({ role, user, assistant, answer, extras, offsets, metadata, sidecar, hidden }): Turn => {
    const content =
      role === 'assistant' ? assistant : role === 'user' ? user : user.filter((b) => b.type === 'text')
    const open = content.flatMap((b, i) =>
      b.type === 'function_call' && content[i + 1]?.type !== 'function_result' ? [b] : [],
    )
    const results =
      role === 'assistant'
        ? answer.slice(0, open.length).map((r, i) => ({
            call: (open[i] as { id: string }).id,
            fn: (open[i] as { function_id: string }).function_id,
            ...r,
          }))
        : []
    const side =
      sidecar && role !== 'custom' && (extras.length > 0 || metadata !== undefined)
        ? { extras, offsets: [...offsets].sort((a, b) => a - b), ...(metadata !== undefined && { metadata }) }
        : null
    return { role, content, results, sidecar: side, hidden }
  })

/** A session tree: a hidden root, then the turns chained, each with its result entries and sidecar. */
export const sessionTree: fc.Arbitrary<{ tree: SessionTree; entries: SessionEntry[] }> = fc
  .array(turn, { minLength: 1, maxLength: 6 })
  .map((turns) => {
    const entries: SessionEntry[] = []
    let n = 0
    let parent: string | null = null
    const push = (e: Pick<SessionEntry, 'kind'> & Record<string, unknown>): void => {
      const id = `e_${++n}`
      entries.push({
        id,
        parent_id: parent,
        timestamp: 1000 + n,
        revision: n % 3,
        ...(n % 4 === 0 && { origin: { turn: n } }),
        ...e,
      } as SessionEntry)
      parent = id
    }
    push({ kind: 'custom', custom_type: THREAD_ROOT, data: {} })
    for (const t of turns) {
      if (t.role === 'user')
        push({ kind: 'message', message: { role: 'user', content: t.content, timestamp: n } })
      else if (t.role === 'custom')
        push({
          kind: 'message',
          message: { role: 'custom', custom_type: 'note', content: t.content, timestamp: n, display: 'x' },
        })
      else
        push({
          kind: 'message',
          message: {
            role: 'assistant',
            content: t.content,
            stop_reason: 'end',
            model: 'm',
            provider: 'p',
            timestamp: n,
            usage: { input: 1 },
          },
        })
      for (const res of t.results)
        push({
          kind: 'message',
          message: {
            role: 'function_result',
            function_call_id: res.call,
            function_id: res.fn,
            content: res.content,
            timestamp: n,
            details: res.details,
            is_error: res.is_error,
          },
        })
      if (t.sidecar) {
        // The k-th extra lands at k + offset (offsets ascending, at most the message's own part
        // count): strictly ascending final positions, each reachable when inserted in order.
        const own = blocksToParts(t.content).length
        const parts = t.sidecar.extras.map((part, k) => ({
          index: k + Math.min(t.sidecar!.offsets[k] ?? 0, own),
          part,
        }))
        push({
          kind: 'custom',
          custom_type: SIDECAR,
          data: { parts, ...(t.sidecar.metadata !== undefined && { metadata: t.sidecar.metadata }) },
        })
      }
      if (t.hidden) push({ kind: 'custom', custom_type: 'marker', data: { n } })
    }
    const children = new Map<string | null, string[]>()
    for (const e of entries) children.set(e.parent_id, [...(children.get(e.parent_id) ?? []), e.id])
    return {
      tree: { active_leaf: parent, entries: new Map(entries.map((e) => [e.id, e])), children },
      entries,
    }
  })
