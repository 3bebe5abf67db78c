import type { ContentBlock, Json } from '@colloquy/core'
import { evaluate, findExpression } from './calc.js'
import { picture } from './picture.js'
import { hash, pick, sample, seeded } from './random.js'

/** What the built-in model answers to. The reply is a pure function of it. */
export interface ModelInput {
  /** The user's message, as text. */
  prompt: string
  /** Which reply to this prompt: 0 for the first, n for the n-th regeneration. */
  variant: number
  /** What `clock::now` reports: the prompt's timestamp, so a reply can always be reproduced. */
  now: number
}

export const LOCAL_MODEL = { model: 'colloquy-local-1', provider: 'local' } as const

/** One piece of a reply: text-like parts stream token by token, the others appear whole. */
type Part = { kind: 'text' | 'thinking'; text: string } | { kind: 'block'; block: ContentBlock }

const openers = [
  'Happy to help.',
  'Good question.',
  'Here is what I can tell you.',
  'Let me take a swing at that.',
  'Sure thing.',
]
const closers = ['Anything else?', 'Hope that helps!', 'What would you like to try next?', 'Over to you.']
const about = [
  "I'm Colloquy's built-in local model: I run right here in this tab, with no network and no API key, and I always give the same answer to the same prompt.",
  'Edit your message to branch the conversation, or regenerate me for a different take: every version is kept, and the little picker flips between them.',
  'Everything on this screen lives in IndexedDB, so it survives a reload and shows up live in your other tabs.',
  "Ask me to draw something, to work out some arithmetic such as 12 * (3 + 4), or what time it is, and I'll use my tools.",
  'You can also fork any message into a new chat and take the conversation somewhere else without touching this one.',
]

const topicOf = (prompt: string): string => {
  const words = prompt
    .trim()
    .replace(/[.?!…]+$/, '')
    .split(/\s+/)
    .filter(Boolean)
  const head = words.slice(0, 8).join(' ')
  return words.length > 8 ? `${head}…` : head
}

function plan(input: ModelInput): Part[] {
  const seed = hash(`${input.prompt}\u0000${input.variant}`)
  const rng = seeded(seed)
  const lower = input.prompt.toLowerCase()
  const everything = /\b(demo|everything|all blocks?)\b/.test(lower)
  const found = findExpression(input.prompt)
  const expression = found ?? (everything ? '(17 + 25) * 2' : null)
  const wantsTime = everything || /\b(time|clock|date|today)\b/.test(lower)
  const wantsPicture = everything || /\b(draw|picture|image|paint|sketch)\b/.test(lower)
  const wantsThinking = everything || /\b(why|how|think|explain|reason|plan)\b/.test(lower) || rng() < 0.3
  const topic = topicOf(input.prompt)
  const callId = (tool: string): string => `call_${hash(`${seed}:${tool}`).toString(36)}`
  const parts: Part[] = []

  if (wantsThinking) {
    const steps = [`The user wrote “${topic}”.`]
    if (everything) steps.push("They want the tour: I'll think out loud, use both tools and draw something.")
    else if (expression)
      steps.push('There is arithmetic in there, so I should call calc::eval rather than guess.')
    if (wantsTime && !everything) steps.push('They want the time: clock::now will tell me.')
    if (wantsPicture && !everything) steps.push("A picture was asked for; I'll draw one.")
    steps.push(
      pick(rng, [
        'Keep the answer short and friendly.',
        'Answer plainly, then offer a next step.',
        'Be concise.',
      ]),
    )
    parts.push({ kind: 'thinking', text: steps.join(' ') })
  }

  /** Runs a built-in tool; its call and result both go into the reply, as with server-side tools. */
  const tool = (
    function_id: string,
    args: Json,
    run: () => string,
  ): { result: string; is_error: boolean } => {
    const id = callId(function_id)
    let result: string
    let is_error = false
    try {
      result = run()
    } catch (e) {
      result = e instanceof Error ? e.message : String(e)
      is_error = true
    }
    parts.push({ kind: 'block', block: { type: 'function_call', id, function_id, arguments: args } })
    parts.push({
      kind: 'block',
      block: {
        type: 'function_result',
        function_call_id: id,
        content: [{ type: 'text', text: result }],
        is_error,
      },
    })
    return { result, is_error }
  }

  const answer: string[] = [pick(rng, openers)]
  if (expression) {
    const { result, is_error } = tool('calc::eval', { expression }, () => String(evaluate(expression)))
    answer.push(
      is_error
        ? `calc::eval could not work out ${expression}: ${result}.`
        : `${expression} = ${result}, worked out exactly with calc::eval.`,
    )
  }
  if (wantsTime) {
    const { result } = tool('clock::now', {}, () => new Date(input.now).toISOString())
    answer.push(`The clock says it is ${result.slice(11, 16)} UTC on ${result.slice(0, 10)}.`)
  }
  if (!expression && !wantsTime && !wantsPicture) answer.push(`You asked about “${topic}”.`)
  const facts = sample(rng, about, wantsPicture || expression ? 1 : 2)
  answer.push(...facts)
  if (wantsPicture) answer.push(`I drew you a little picture for “${topic}”.`)
  answer.push(pick(rng, closers))
  parts.push({ kind: 'text', text: answer.join(' ') })

  if (wantsPicture) parts.push({ kind: 'block', block: { type: 'image', ...picture(seed) } })
  return parts
}

/** Words with their leading space: the "tokens" the model streams. */
export const tokensOf = (text: string): string[] => text.match(/\s*\S+/g) ?? []

/**
 * The reply as a sequence of snapshots, each the whole content so far: exactly what
 * `store.updateMessage` takes, one call per token.
 */
export function* replySteps(input: ModelInput): Generator<ContentBlock[]> {
  const done: ContentBlock[] = []
  for (const part of plan(input)) {
    if (part.kind === 'block') {
      done.push(part.block)
      yield [...done]
      continue
    }
    let text = ''
    for (const token of tokensOf(part.text)) {
      text += token
      yield [...done, part.kind === 'text' ? { type: 'text', text } : { type: 'thinking', text }]
    }
    done.push(part.kind === 'text' ? { type: 'text', text } : { type: 'thinking', text })
  }
}
