import type { ContentBlock, SessionEntry, SessionImport } from '@colloquy/core'
import { fromBase64 } from '../input/base64.js'
import { DEFAULT_SESSION_FILE, extensionOf, MANIFEST, writeManifest } from './manifest.js'
import { childrenOf, pathTo } from '../session/tree.js'
import { iso, type Obj } from '../values.js'
import { writeZip } from '../input/zip.js'

// An OPA archive (seeds/000): META-INF/MANIFEST.MF, prompt.md, session/history.json and
// session/attachments/*. OPA histories are linear, so only the active path is written; the
// manifest and the history's `metadata` say how many branches and entries were left out.
// Each message's `metadata.colloquy` keeps what OPA has no field for (model, usage, ids…).

export interface OpaExportOptions {
  /** `prompt.md`, which OPA requires; default a line asking to continue the session. */
  prompt?: string
  exportedAt?: number
}

class Writer {
  readonly files: Record<string, Uint8Array> = {}
  private n = 0
  /** File paths already written, by attachment id (a file referenced twice is stored once). */
  private readonly written = new Map<string, string>()

  /** `files`: attachment bytes the session carries (`SessionImport.attachments`, from `readSession`). */
  constructor(private readonly bytes: ReadonlyMap<string, Uint8Array> = new Map()) {}

  /** A file attachment into the archive, under its own name (OPA readers take the name from the path). */
  attachFile(attachment_id: string, name: string): string | undefined {
    const known = this.written.get(attachment_id)
    if (known) return known
    const data = this.bytes.get(attachment_id)
    if (!data) return undefined
    // eslint-disable-next-line no-control-regex -- control characters are what a path in the archive must not hold
    const safe = name.replace(/[\\/\u0000-\u001f]/g, '_').replace(/^\.+/, '_') || 'file'
    const path = `session/attachments/${++this.n}/${safe}`
    this.files[path] = data
    this.written.set(attachment_id, path)
    return path
  }

  attach(mime: string, base64: string): string {
    const path = `session/attachments/${++this.n}.${extensionOf(mime)}`
    this.files[path] = fromBase64(base64)
    return path
  }

  block(b: ContentBlock): Obj {
    switch (b.type) {
      case 'text':
        return { type: 'text', text: b.text }
      case 'image':
        return {
          type: 'image',
          mime: b.mime,
          source: { type: 'attachment', path: this.attach(b.mime, b.data) },
          ...(b.attachment_id !== undefined && { attachment_id: b.attachment_id }),
        }
      case 'file': {
        // Bytes the export was given go into the archive; otherwise a named reference.
        const path = this.attachFile(b.attachment_id, b.name)
        return path
          ? { type: 'file', name: b.name, mime: b.mime, size: b.size, source: { type: 'attachment', path } }
          : { type: 'file', attachment_id: b.attachment_id, name: b.name, mime: b.mime, size: b.size }
      }
      case 'thinking':
        return b.signature === undefined
          ? { type: 'thinking', text: b.text }
          : { type: 'thinking', text: b.text, signature: b.signature }
      case 'function_call':
        return { type: 'tool_use', id: b.id, name: b.function_id, input: b.arguments }
      case 'function_result':
        return {
          type: 'tool_result',
          tool_use_id: b.function_call_id,
          content: this.result(b.content),
          ...(b.is_error !== undefined && { is_error: b.is_error }),
        }
    }
  }

  /** A result's content: a string when it is one text (the spec's form), else blocks. */
  result(content: readonly ContentBlock[]): string | Obj[] {
    return content.length === 1 && content[0].type === 'text'
      ? content[0].text
      : content.map((c) => this.block(c))
  }

  message(e: SessionEntry): Obj {
    const { id, parent_id: _parent, ...rest } = e
    let ext: Obj = { ...rest }
    if (rest.kind === 'message') {
      const { content: _content, ...message } = rest.message
      ext = { ...rest, message }
    }
    const base = { id, timestamp: iso(e.timestamp), metadata: { colloquy: ext } }
    if (e.kind === 'custom') return { ...base, role: 'system', content: `[${e.custom_type}]` }
    const m = e.message
    if (m.role === 'function_result') {
      return {
        ...base,
        role: 'tool',
        content: [
          {
            type: 'tool_result',
            tool_use_id: m.function_call_id,
            content: this.result(m.content),
            is_error: m.is_error,
          },
        ],
      }
    }
    const role = m.role === 'custom' ? 'system' : m.role
    const single = m.content.length === 1 && m.content[0].type === 'text'
    return {
      ...base,
      role,
      content: single ? (m.content[0] as { text: string }).text : m.content.map((b) => this.block(b)),
    }
  }
}

export function exportOpa(session: SessionImport, options: OpaExportOptions = {}): Uint8Array<ArrayBuffer> {
  const { meta, entries, active_leaf } = session
  const path = pathTo(new Map(entries.map((e) => [e.id, e])), active_leaf)
  const children = childrenOf(entries)
  const omittedBranches = entries.filter((e) => !children.has(e.id) && e.id !== active_leaf).length
  const omittedEntries = entries.length - path.length
  const w = new Writer(
    new Map(
      (session.attachments ?? []).map((a) => [
        a.attachment_id,
        a.bytes instanceof Uint8Array ? a.bytes : new Uint8Array(),
      ]),
    ),
  )
  const history = {
    opa_version: '0.1',
    session_id: meta.session_id,
    created_at: iso(meta.created_at),
    updated_at: iso(meta.updated_at),
    messages: path.map((e) => w.message(e)),
    metadata: {
      colloquy: {
        title: meta.title,
        omitted_branches: omittedBranches,
        omitted_entries: omittedEntries,
        metadata: meta.metadata ?? null,
      },
    },
  }
  const enc = new TextEncoder()
  const manifest = writeManifest({
    'Manifest-Version': '1.0',
    'OPA-Version': '0.1',
    Title: meta.title || meta.session_id,
    'Prompt-File': 'prompt.md',
    'Session-File': DEFAULT_SESSION_FILE,
    'Execution-Mode': 'interactive',
    'Created-By': '@colloquy/formats',
    'Created-At': iso(options.exportedAt ?? Date.now()),
    // OPA has no branches: say what the archive does not hold.
    'X-Colloquy-Branches-Omitted': String(omittedBranches),
    'X-Colloquy-Entries-Omitted': String(omittedEntries),
  })
  return writeZip({
    [MANIFEST]: enc.encode(manifest),
    'prompt.md': enc.encode(
      options.prompt ?? `Continue the session "${meta.title || meta.session_id}" from its history.\n`,
    ),
    [DEFAULT_SESSION_FILE]: enc.encode(JSON.stringify(history, null, 2)),
    ...w.files,
  })
}
