import type { SessionEntry } from '@colloquy/core'
import { titleFrom } from '../values.js'

// A session's title when its format names none (or names one no reader should see): the first
// thing the user really wrote. Tools put much else in user messages: slash commands, as typed
// (`/model`) or wrapped (`<command-name>/model</command-name>`), their output, caveats and
// reminders the tool injects; a sub-agent's "summary" may be the raw JSON it returned.

/** Elements tools wrap around what they inject into a user message (Claude Code, Codex). */
const WRAPPERS = [
  'command-name',
  'command-message',
  'command-args',
  'local-command-stdout',
  'local-command-stderr',
  'local-command-caveat',
  'system-reminder',
  'user-prompt-submit-hook',
  'bash-input',
  'bash-stdout',
  'bash-stderr',
  'environment_context',
  'user_instructions',
]
const WRAPPED = new RegExp(`<(${WRAPPERS.join('|')})>[\\s\\S]*?</\\1>`, 'g')
/** Placeholders the tool writes for pasted content: `[Image #1]`, `[Pasted text #2 +40 lines]`. */
const PLACEHOLDER = /\[(?:Image|Pasted text) #\d+[^\]]*\]/g
/** A slash command as typed: `/model`, `/compact keep the API notes`, `/review:pr 12`; not `/usr/bin …`. */
const COMMAND = /^\/[A-Za-z][\w:.-]*(?:\s|$)/
/** One element and nothing else: something a tool injected that is not in the list above. */
const ONE_ELEMENT = /^<([a-z][\w-]*)(?:\s[^>]*)?>[\s\S]*<\/\1>$/

/**
 * Whether a string is JSON (or the start of it, as a summary cut at 200 characters is): a
 * `{` followed by a key or `}`, or a `[` followed by a value. `[Draft] plan` is not.
 */
export function looksLikeJson(text: string): boolean {
  return /^\s*(?:\{\s*(?:"|\}|$)|\[\s*(?:[[{"\]\d-]|true|false|null|$))/.test(text)
}

/** A whole JSON object or array (a pasted payload): `[1, 2] sort these` is a prompt. */
function isJsonDocument(text: string): boolean {
  if (!looksLikeJson(text)) return false
  try {
    return typeof JSON.parse(text) === 'object'
  } catch {
    return false
  }
}

/** The command line a wrapped slash command stands for (`/orchestrator fix the docs`). */
function wrappedCommand(text: string): string | undefined {
  const name = /<command-name>([^<]*)<\/command-name>/.exec(text)?.[1]?.trim()
  if (!name) return undefined
  const args = /<command-args>([^<]*)<\/command-args>/.exec(text)?.[1]?.trim() ?? ''
  return `${name.startsWith('/') ? name : `/${name}`} ${args}`.trim()
}

/**
 * What a user message's text gives a title: `prompt` for the user's own words, `command` for
 * a slash command with arguments (used only when no message has words of the user's own), or
 * nothing for a bare command, a tool's injection or JSON.
 */
export function promptText(text: string): { prompt?: string; command?: string } {
  const command = wrappedCommand(text)
  const rest = text.replace(WRAPPED, '').replace(PLACEHOLDER, '').trim()
  if (!rest) return command !== undefined && command.includes(' ') ? { command } : {}
  if (COMMAND.test(rest)) return /\s\S/.test(rest.split('\n', 1)[0]) ? { command: rest } : {}
  if (ONE_ELEMENT.test(rest) || isJsonDocument(rest)) return {}
  return { prompt: rest }
}

/**
 * The title the user's first real words give, in entry order: user messages (not `is_meta`),
 * their text blocks. A command with arguments stands in when no message has words of its own.
 */
export function promptTitle(entries: Iterable<SessionEntry>): string | undefined {
  let command: string | undefined
  for (const e of entries) {
    if (e.kind !== 'message' || e.message.role !== 'user' || e.origin?.is_meta) continue
    for (const b of e.message.content) {
      if (b.type !== 'text') continue
      const t = promptText(b.text)
      if (t.prompt) return titleFrom(t.prompt)
      command ??= t.command
    }
  }
  return command === undefined ? undefined : titleFrom(command)
}

/** A title a format names, unless it is empty or JSON (a sub-agent's raw result). */
export function ownTitle(title: string | undefined): string | undefined {
  const t = title?.trim()
  return t && !looksLikeJson(t) ? t : undefined
}
