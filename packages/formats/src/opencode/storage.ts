import type { ImportContext } from '../import/context.js'
import { FormatError } from '../errors.js'
import { DEFAULT_MAX_BYTES, fileEntries, tooLarge, type FileContents, type FileMap } from '../input/source.js'
import type { OcMessage, OcSession } from './import.js'
import { isObj, str, type Obj } from '../values.js'

// The OpenCode JSON storage tree (seeds/004, spec §4.1): project/<id>.json,
// session/[<projectID>/]<ses>.json, message/<ses>/<msg>.json, part/<msg>/<prt>.json,
// todo/<ses>.json, session_diff/<ses>.json; the older per-project layout nests
// session/{info,message,part} the same way. Ids come from file and directory names, as
// OpenCode's own migration does, because old migrations moved files without rewriting them.

const sizeOf = (c: FileContents): number =>
  typeof c === 'string' ? c.length : c instanceof Uint8Array ? c.byteLength : c.size

async function textOf(c: FileContents): Promise<string> {
  if (typeof c === 'string') return c
  if (c instanceof Uint8Array) return new TextDecoder().decode(c)
  return c.text()
}

/** Collects sessions, messages and parts from parsed storage records, wherever they came from. */
export class OcCollector {
  private readonly sessions = new Map<string, OcSession>()
  private readonly messages = new Map<string, OcMessage & { session: string | undefined }>()
  private readonly projects = new Map<string, Obj>()

  session(id: string, info: Obj | undefined): OcSession {
    let s = this.sessions.get(id)
    if (!s) this.sessions.set(id, (s = { id, info: undefined, messages: [] }))
    if (info) s.info = { ...info, id }
    return s
  }

  message(id: string, session: string | undefined, info: Obj | undefined): OcMessage {
    let m = this.messages.get(id)
    if (!m) this.messages.set(id, (m = { id, info: undefined, parts: [], session }))
    if (info) m.info = { ...info, id }
    m.session ??= session
    return m
  }

  part(id: string, message: string, session: string | undefined, data: Obj): void {
    this.message(message, session, undefined).parts.push({ id, data: { ...data, id } })
  }

  project(id: string, info: Obj): void {
    this.projects.set(id, info)
  }

  todos(session: string, todos: unknown): void {
    this.session(session, undefined).todos = todos
  }

  done(ctx: ImportContext): OcSession[] {
    for (const m of this.messages.values()) {
      const sid = m.session ?? str(m.info?.sessionID) ?? str(m.parts[0]?.data.sessionID)
      if (!sid) {
        ctx.warnings.add(
          'orphan-message',
          `message ${m.id} names no session; skipped with its ${m.parts.length} part(s)`,
        )
        continue
      }
      this.session(sid, undefined).messages.push(m)
    }
    for (const s of this.sessions.values()) {
      const p = this.projects.get(str(s.info?.projectID) ?? '')
      if (p) s.project = p
    }
    // Sessions with neither messages nor info are only a todo list: nothing to import.
    return [...this.sessions.values()].filter((s) => s.messages.length || s.info)
  }
}

export async function readOpenCodeFiles(files: FileMap, ctx: ImportContext): Promise<OcSession[]> {
  const list = fileEntries(files)
  const max = ctx.options.maxBytes ?? DEFAULT_MAX_BYTES
  const total = list.reduce((n, [, c]) => n + sizeOf(c), 0)
  if (total > max) throw tooLarge(total, max)
  const c = new OcCollector()
  let done = 0
  for (const [path, contents] of list) {
    done += sizeOf(contents)
    ctx.options.onProgress?.({ phase: 'read', done, total })
    const segs = path.split('/')
    const file = segs.at(-1)!
    const dir = segs.at(-2) ?? ''
    const up = segs.at(-3) ?? ''
    if (!file.endsWith('.json')) {
      ctx.skipped.add(`file ${segs.includes('migration') ? 'migration' : 'other'}`)
      continue
    }
    const base = file.slice(0, -5)
    if (segs.includes('session_diff')) {
      // Whole before/after file contents: large, and not part of the conversation.
      ctx.skipped.add('session_diff file')
      continue
    }
    let data: unknown
    try {
      data = JSON.parse(await textOf(contents))
    } catch {
      ctx.warnings.add('bad-file', `${path} is not valid JSON; skipped`, { file: path })
      continue
    }
    if (segs.includes('todo')) c.todos(base, data)
    else if (!isObj(data))
      ctx.warnings.add('bad-file', `${path} is not a JSON object; skipped`, { file: path })
    else if (base.startsWith('prt_'))
      c.part(
        base,
        dir.startsWith('msg_') ? dir : (str(data.messageID) ?? ''),
        up.startsWith('ses_') ? up : str(data.sessionID),
        data,
      )
    else if (base.startsWith('msg_'))
      c.message(base, dir.startsWith('ses_') ? dir : str(data.sessionID), data)
    else if (base.startsWith('ses_') || (segs.includes('session') && dir !== 'message' && dir !== 'part'))
      c.session(base, data)
    else if (segs.includes('project')) c.project(base, data)
    else ctx.skipped.add('file other')
  }
  return c.done(ctx)
}

/** One JSON document: an `opencode export`, or a single session, message or part record. */
export function readOpenCodeJson(doc: unknown, ctx: ImportContext): OcSession[] {
  if (!isObj(doc)) throw new FormatError('format/invalid', 'an OpenCode document must be a JSON object')
  const c = new OcCollector()
  if (isObj(doc.info) && Array.isArray(doc.messages)) {
    const sid = str(doc.info.id) ?? ''
    c.session(sid, doc.info)
    for (const m of doc.messages) {
      if (!isObj(m) || !isObj(m.info)) continue
      const mid = str(m.info.id) ?? ''
      c.message(mid, sid, m.info)
      for (const p of Array.isArray(m.parts) ? m.parts : [])
        if (isObj(p)) c.part(str(p.id) ?? '', mid, sid, p)
    }
  } else {
    const id = str(doc.id) ?? ''
    if (id.startsWith('prt_')) c.part(id, str(doc.messageID) ?? '', str(doc.sessionID), doc)
    else if (id.startsWith('msg_')) c.message(id, str(doc.sessionID), doc)
    else if (id.startsWith('ses_')) c.session(id, doc)
    else throw new FormatError('format/invalid', 'not an OpenCode export, session, message or part')
  }
  return c.done(ctx)
}
