import {
  type AssistantMessage,
  type ContentBlock,
  type JsonObject,
  type SessionEntry,
  type SessionImport,
} from '@colloquy/core'
import { parseSessionEntry } from '@colloquy/core/wire'
import { toBase64 } from '../input/base64.js'
import type { ImportContext } from '../import/context.js'
import { isZipBytes } from '../input/detect.js'
import { chain, messageEntry, text } from '../session/entries.js'
import { FormatError } from '../errors.js'
import { DEFAULT_MAX_BYTES, readBytes, type Source } from '../input/source.js'
import { DEFAULT_SESSION_FILE, MANIFEST, mimeOf, parseManifest } from './manifest.js'
import { sessionOf } from '../session/session-of.js'
import { arr, count, isObj, str, toJson, toMs, type Obj } from '../values.js'
import { listZip, readZip, safePath } from '../input/zip.js'

// OPA (seeds/000): an `.opa` ZIP whose `session/history.json` is a linear message list, or
// that JSON alone. Attachments (`{type:"image"|"file", source:{type:"attachment", path}}`)
// are read from the archive: images inline as image blocks, other files as `file` blocks
// whose bytes are returned in `ImportResult.attachments`.

interface Archive {
  files: Record<string, Uint8Array>
  manifest: Record<string, string>
}

const decode = (b: Uint8Array): string => new TextDecoder().decode(b)

class HistoryReader {
  private readonly calls: string[] = []
  private readonly names = new Map<string, string>()
  private lastTime: number

  constructor(
    private readonly ctx: ImportContext,
    private readonly sessionId: string,
    private readonly archive: Archive | undefined,
    start: number,
  ) {
    this.lastTime = start
  }

  private warn(code: string, message: string): void {
    this.ctx.warnings.add(code, message, { session_id: this.sessionId })
  }

  private attachment(source: unknown, what: string): { path: string; bytes: Uint8Array } | undefined {
    const path = isObj(source) ? str(source.path) : undefined
    const bytes = path !== undefined ? this.archive?.files[path] : undefined
    if (path !== undefined && bytes) return { path, bytes }
    this.warn(
      'attachment-missing',
      `${what} ${path ?? '(no path)'} is not ${this.archive ? 'in the archive' : 'available (a bare history.json has no attachments)'}; kept as a text reference`,
    )
    return undefined
  }

  block(b: unknown): ContentBlock {
    if (typeof b === 'string') return text(b)
    if (!isObj(b)) return text(JSON.stringify(b))
    switch (b.type) {
      case 'text':
        return text(str(b.text) ?? '')
      case 'thinking':
        return str(b.signature) === undefined
          ? { type: 'thinking', text: str(b.text) ?? '' }
          : { type: 'thinking', text: str(b.text) ?? '', signature: str(b.signature)! }
      case 'tool_use': {
        const id = str(b.id) ?? ''
        this.names.set(id, str(b.name) ?? 'unknown')
        this.calls.push(id)
        return {
          type: 'function_call',
          id,
          function_id: str(b.name) ?? 'unknown',
          arguments: toJson(b.input ?? null),
        }
      }
      case 'tool_result':
        return {
          type: 'function_result',
          function_call_id: str(b.tool_use_id) ?? '',
          content: this.content(b.content),
          ...(typeof b.is_error === 'boolean' && { is_error: b.is_error }),
        }
      case 'image': {
        const source = isObj(b.source) ? b.source : {}
        if (source.type === 'base64')
          return { type: 'image', mime: str(source.media_type) ?? 'image/png', data: str(source.data) ?? '' }
        const a = this.attachment(source, 'image')
        if (!a) return text(`[image: ${str(source.path) ?? ''}]`)
        const attachment_id = str(b.attachment_id)
        return {
          type: 'image',
          mime: str(b.mime) ?? mimeOf(a.path),
          data: toBase64(a.bytes),
          ...(attachment_id !== undefined && { attachment_id }),
        }
      }
      case 'file': {
        if (b.source === undefined && typeof b.attachment_id === 'string') {
          // A reference this package wrote: the bytes were never in the archive.
          return {
            type: 'file',
            attachment_id: b.attachment_id,
            name: str(b.name) ?? '',
            mime: str(b.mime) ?? 'application/octet-stream',
            size: count(b.size) ?? 0,
          }
        }
        const a = this.attachment(b.source, 'file')
        if (!a) return text(`[file: ${isObj(b.source) ? (str(b.source.path) ?? '') : ''}]`)
        const name = a.path.split('/').at(-1)!
        const attachment_id = `att-${this.sessionId}-${a.path}`
        this.ctx.attachments.push({
          session_id: this.sessionId,
          attachment_id,
          name,
          mime: mimeOf(a.path),
          data: a.bytes,
        })
        return { type: 'file', attachment_id, name, mime: mimeOf(a.path), size: a.bytes.byteLength }
      }
      default:
        // The OPA readers' own rule: an unknown block is read as text.
        this.warn(
          'unknown-block',
          `a block of type ${JSON.stringify(b.type)} is read as text, as OPA parsers do`,
        )
        return text(typeof b.text === 'string' ? b.text : JSON.stringify(b))
    }
  }

  content(c: unknown): ContentBlock[] {
    return typeof c === 'string' ? [text(c)] : arr(c).map((b) => this.block(b))
  }

  private result(
    id: string,
    call: string,
    content: ContentBlock[],
    time: number,
    isError: boolean,
  ): SessionEntry {
    const open = this.calls.indexOf(call)
    if (open !== -1) this.calls.splice(open, 1)
    return messageEntry(id, {
      role: 'function_result',
      function_call_id: call,
      function_id: this.names.get(call) ?? 'unknown',
      content,
      timestamp: time,
      details: null,
      is_error: isError,
    })
  }

  entries(m: Obj, id: string): SessionEntry[] {
    const time = (this.lastTime = toMs(m.timestamp) ?? this.lastTime)
    const meta = isObj(m.metadata) ? m.metadata : {}
    const exact = this.extension(meta.colloquy, m, id)
    if (exact) return [exact]
    const role = str(m.role)
    const blocks = this.content(m.content)
    if (role === 'assistant') {
      const message: AssistantMessage = {
        role: 'assistant',
        content: blocks,
        model: str(meta.model) ?? 'unknown',
        provider: str(meta.provider) ?? 'unknown',
        timestamp: time,
        stop_reason: blocks.some((b) => b.type === 'function_call') ? 'function_call' : 'end',
      }
      return [messageEntry(id, message)]
    }
    if (role === 'system')
      return [messageEntry(id, { role: 'custom', custom_type: 'system', content: blocks, timestamp: time })]
    const results = blocks.filter((b) => b.type === 'function_result')
    const rest = blocks.filter((b) => b.type !== 'function_result')
    const out = results.map((r) =>
      this.result(
        results.length === 1 && !rest.length ? id : `${id}:${r.function_call_id}`,
        r.function_call_id,
        r.content,
        time,
        r.is_error === true,
      ),
    )
    if (role === 'tool' && !results.length) {
      // A tool message with plain content answers the oldest call still open.
      const call = str(meta.tool_use_id) ?? this.calls[0]
      if (!call)
        this.warn(
          'orphan-result',
          `tool message ${id} answers no open tool call; kept as a result of an unknown call`,
        )
      return [this.result(id, call ?? 'unknown', rest, time, false)]
    }
    if (role !== 'user' && role !== 'tool')
      this.warn('unknown-role', `message ${id} has role ${JSON.stringify(role)}; read as a user message`)
    if (rest.length || !results.length)
      out.push(messageEntry(id, { role: 'user', content: rest, timestamp: time }))
    return out
  }

  /** A message this package wrote: `metadata.colloquy` restores the entry exactly. */
  private extension(ext: unknown, m: Obj, id: string): SessionEntry | undefined {
    if (!isObj(ext)) return undefined
    const base = {
      id,
      parent_id: null,
      timestamp: ext.timestamp,
      revision: ext.revision ?? 0,
      ...(ext.origin !== undefined && { origin: ext.origin }),
    }
    let entry: unknown
    if (ext.kind === 'custom')
      entry = { ...base, kind: 'custom', custom_type: ext.custom_type, data: ext.data ?? null }
    else if (isObj(ext.message)) {
      const result = arr(m.content).find((b) => isObj(b) && b.type === 'tool_result')
      const content =
        ext.message.role === 'function_result' && isObj(result)
          ? this.content(result.content)
          : this.content(m.content)
      entry = { ...base, kind: 'message', message: { ...ext.message, content } }
    }
    try {
      return structuredClone(parseSessionEntry(entry, `messages[${id}]`)) as SessionEntry
    } catch (e) {
      this.warn(
        'bad-extension',
        `message ${id}: its colloquy metadata is invalid (${(e as Error).message}); read as plain OPA`,
      )
      return undefined
    }
  }
}

async function openArchive(
  bytes: Uint8Array,
  ctx: ImportContext,
): Promise<{ archive: Archive; history: unknown }> {
  const maxBytes = ctx.options.maxBytes ?? DEFAULT_MAX_BYTES
  const names = listZip(bytes, { maxBytes })
  const head = readZip(bytes, (n) => n === MANIFEST, { maxBytes })
  const manifest = head[MANIFEST] ? parseManifest(decode(head[MANIFEST])) : {}
  const sessionFile = manifest['Session-File'] ?? DEFAULT_SESSION_FILE
  if (!safePath(sessionFile))
    throw new FormatError(
      'format/unsafe_archive',
      `the manifest's Session-File ${JSON.stringify(sessionFile)} is an unsafe path; the archive is refused`,
    )
  if (!names.includes(sessionFile))
    throw new FormatError(
      'format/invalid',
      `the archive has no session history (${sessionFile}); ${names.length} entries: ${names.slice(0, 5).join(', ')}`,
    )
  const raw = readZip(bytes, (n) => n === sessionFile, { maxBytes })[sessionFile]
  let history: unknown
  try {
    history = JSON.parse(decode(raw))
  } catch (e) {
    throw new FormatError('format/invalid', `${sessionFile} is not valid JSON (${(e as Error).message})`)
  }
  // Only the attachments the history names are inflated, within what is left of the budget.
  const wanted = new Set<string>()
  for (const m of isObj(history) ? arr(history.messages) : []) {
    const visit = (b: unknown): void => {
      if (!isObj(b)) return
      if (isObj(b.source) && b.source.type === 'attachment') {
        const path = str(b.source.path) ?? ''
        if (!safePath(path))
          throw new FormatError(
            'format/unsafe_archive',
            `attachment path ${JSON.stringify(path)} is unsafe (absolute or with ..); the archive is refused`,
          )
        wanted.add(path)
      }
      arr(b.content).forEach(visit)
    }
    if (isObj(m)) arr(m.content).forEach(visit)
  }
  const files = wanted.size
    ? readZip(bytes, (n) => wanted.has(n), { maxBytes: maxBytes - raw.byteLength })
    : {}
  const other = names.filter((n) => !wanted.has(n) && n !== MANIFEST && n !== sessionFile && !n.endsWith('/'))
  if (other.length) ctx.skipped.add('archive entry (prompt, data, signatures)', other.length)
  return { archive: { files, manifest }, history }
}

export async function readOpa(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  const bytes = await readBytes(source, ctx.options)
  let archive: Archive | undefined
  let history: unknown
  if (isZipBytes(bytes)) ({ archive, history } = await openArchive(bytes, ctx))
  else {
    try {
      history = JSON.parse(decode(bytes))
    } catch (e) {
      throw new FormatError('format/invalid', `not an OPA archive nor valid JSON (${(e as Error).message})`)
    }
  }
  if (!isObj(history) || !Array.isArray(history.messages))
    throw new FormatError(
      'format/invalid',
      'an OPA history needs opa_version, session_id and a messages array',
    )
  const id = str(history.session_id) ?? `opa-${ctx.now()}`
  const created = toMs(history.created_at)
  const reader = new HistoryReader(ctx, id, archive, created ?? ctx.now())
  const entries: SessionEntry[] = []
  const seen = new Set<string>()
  history.messages.forEach((m, i) => {
    if (!isObj(m))
      return ctx.warnings.add('bad-message', `messages[${i}] is not an object; skipped`, { session_id: id })
    let mid = str(m.id) ?? String(i + 1)
    while (seen.has(mid)) mid = `${mid}~`
    seen.add(mid)
    for (const e of reader.entries(m, mid)) {
      seen.add(e.id)
      entries.push(e)
    }
  })
  chain(entries)
  const ext = isObj(history.metadata) && isObj(history.metadata.colloquy) ? history.metadata.colloquy : {}
  const omitted = Number(archive?.manifest['X-Colloquy-Branches-Omitted'] ?? ext.omitted_branches ?? 0)
  return [
    sessionOf(
      {
        session_id: id,
        title:
          archive?.manifest.Title && archive.manifest.Title !== id ? archive.manifest.Title : str(ext.title),
        created_at: created,
        updated_at: toMs(history.updated_at),
        metadata: {
          ...(isObj(ext.metadata)
            ? (toJson(ext.metadata) as JsonObject)
            : { format: 'opa', source_session_id: id, opa_version: str(history.opa_version) ?? null }),
          ...(omitted ? { opa_omitted_branches: omitted } : {}),
        },
        entries,
        active_leaf: entries.at(-1)?.id ?? null,
      },
      ctx.now,
    ),
  ]
}
