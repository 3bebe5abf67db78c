import type { CustomEntry, Json } from '@colloquy/core'
import { customEntry } from './entries.js'
import { FormatError } from './errors.js'
import { parseJson } from './records.js'
import { readText, type Source } from './input.js'
import type { ImportContext } from './context.js'
import { isObj, type Obj } from './values.js'

// What the chat-app exports (ChatGPT, Claude.ai, Open WebUI) share. Each conversation becomes
// one session whose single root is a `thread_root` custom entry, the same root the demo apps
// give a new chat: the first prompts of a conversation (an edited first message, Claude.ai's
// parallel chains, ChatGPT's `message:null` root) are then siblings under it, so a picker can
// show them, and the session keeps the contract's one root.

export const THREAD_ROOT = 'thread_root'

export function rootEntry(id: string, timestamp: number, source: string, data: Record<string, Json> = {}): CustomEntry {
  return customEntry(id, timestamp, THREAD_ROOT, { source, ...data })
}

/**
 * Hidden messages (system prompts, custom instructions, anything the app marks hidden) are kept
 * on the path as custom entries: stored and exported, never shown as chat turns.
 */
export function hiddenEntry(id: string, timestamp: number, customType: string, data: Json): CustomEntry {
  return customEntry(id, timestamp, customType, data)
}

/** The whole export as parsed JSON: these apps write one JSON document, never lines. */
export async function readDocument(source: Source, ctx: ImportContext): Promise<unknown> {
  return parseJson((await readText(source, ctx.options)).replace(/^\uFEFF/, ''))
}

/** The conversations of an export: an array of them, or a single one. */
export function conversations(doc: unknown, what: string): Obj[] {
  const list = Array.isArray(doc) ? doc : [doc]
  const out = list.filter(isObj)
  if (!out.length && list.length) throw new FormatError('format/invalid', `${what}: expected conversation objects`)
  return out
}

/**
 * Session ids for an export's conversations, unique within it: an export that repeats a
 * conversation id (two copies of one chat) would otherwise make the second import fail.
 */
export function sessionIds(ids: readonly string[], ctx: ImportContext): string[] {
  const used = new Set<string>()
  return ids.map((id) => {
    let unique = id
    for (let n = 2; used.has(unique); n++) unique = `${id}~${n}`
    if (unique !== id) ctx.warnings.add('duplicate-session', `conversation ${id} appears more than once in the export; this copy is imported as ${unique}`, { session_id: unique })
    used.add(unique)
    return unique
  })
}
