import type { CustomEntry, Json, SessionImport } from '@colloquy/core'
import { customEntry } from '../session/entries.js'
import { FormatError } from '../errors.js'
import { parseJson } from '../input/records.js'
import { readText, type Source } from '../input/source.js'
import { eachArrayElement } from '../input/json-array.js'
import type { ImportContext } from '../import/context.js'
import { isObj, type Obj } from '../values.js'

// What the chat-app exports (ChatGPT, Claude.ai, Open WebUI) share. Each conversation becomes
// one session whose single root is a `thread_root` custom entry, the same root the demo apps
// give a new chat: the first prompts of a conversation (an edited first message, Claude.ai's
// parallel chains, ChatGPT's `message:null` root) are then siblings under it, so a picker can
// show them, and the session keeps the contract's one root.

export const THREAD_ROOT = 'thread_root'

export function rootEntry(
  id: string,
  timestamp: number,
  source: string,
  data: Record<string, Json> = {},
): CustomEntry {
  return customEntry(id, timestamp, THREAD_ROOT, { source, ...data })
}

/**
 * Hidden messages (system prompts, custom instructions, anything the app marks hidden) are kept
 * on the path as custom entries: stored and exported, never shown as chat turns.
 */
export function hiddenEntry(id: string, timestamp: number, customType: string, data: Json): CustomEntry {
  return customEntry(id, timestamp, customType, data)
}

/**
 * Each conversation of an export (an array of them, or a single one), as it is read: an array
 * is parsed one conversation at a time (see `eachArrayElement`), so neither the text nor the
 * parsed export is ever whole in memory; a single object is parsed whole.
 */
async function eachConversation(
  source: Source,
  ctx: ImportContext,
  what: string,
  each: (conv: Obj, index: number) => void,
): Promise<void> {
  const head = await source.head(4096)
  const text = (typeof head === 'string' ? head : new TextDecoder().decode(head))
    .replace(/^\uFEFF/, '')
    .trimStart()
  let objects = 0
  let junk = 0
  const one = (v: unknown): void => {
    if (isObj(v)) each(v, objects++)
    else junk++
  }
  if (text[0] === '[') await eachArrayElement(source, ctx, one)
  else one(parseJson((await readText(source, ctx.options)).replace(/^\uFEFF/, '')))
  if (junk && !objects) throw new FormatError('format/invalid', `${what}: expected conversation objects`)
  if (junk)
    ctx.warnings.add('bad-record', `${what}: ${junk} element(s) are not conversation objects; skipped`)
}

/**
 * One session per conversation of an export (see `eachConversation`): `idOf` names a
 * conversation, made unique within the export, and `session` converts it under that id.
 */
export async function exportSessions(
  source: Source,
  ctx: ImportContext,
  what: string,
  idOf: (conv: Obj, index: number) => string,
  session: (conv: Obj, id: string) => SessionImport,
): Promise<SessionImport[]> {
  const sessions: SessionImport[] = []
  const used = new Set<string>()
  await eachConversation(source, ctx, what, (conv, i) => {
    sessions.push(session(conv, uniqueId(used, idOf(conv, i), ctx)))
  })
  return sessions
}

/**
 * A conversation's session id, unique within its export (`used` holds the ids given so far):
 * an export that repeats a conversation (two copies of one chat) would otherwise fail to import.
 */
function uniqueId(used: Set<string>, id: string, ctx: ImportContext): string {
  let unique = id
  for (let n = 2; used.has(unique); n++) unique = `${id}~${n}`
  if (unique !== id)
    ctx.warnings.add(
      'duplicate-session',
      `conversation ${id} appears more than once in the export; this copy is imported as ${unique}`,
      { session_id: unique },
    )
  used.add(unique)
  return unique
}
