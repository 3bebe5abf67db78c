import type { SessionImport } from '@colloquy/core'
import { readClaudeCode } from './claude-code.js'
import { readCodex } from './codex.js'
import { readGemini } from './gemini.js'
import { openCodeSessions } from './opencode.js'
import { readOpenCodeDb } from './opencode-sqlite.js'
import { readOpenCodeFiles, readOpenCodeJson } from './opencode-storage.js'
import { readUnified } from './unified-import.js'
import { readOpa } from './opa-import.js'
import { readChatGpt } from './chatgpt.js'
import { readClaudeAi } from './claude-ai.js'
import { readOpenWebUi } from './open-webui.js'
import { ImportContext } from './context.js'
import { detectSource, formatOfFiles, isSqliteBytes } from './detect.js'
import { FormatError } from './errors.js'
import { parseJson } from './records.js'
import { fileEntries, isFileMap, readBytes, readText, Source, type FileMap, type TranscriptInput } from './input.js'
import type { FormatId, ImportOptions, ImportResult } from './types.js'
import { isObj, type Obj } from './values.js'

const unknown = (): FormatError =>
  new FormatError('format/unknown', 'not a transcript this package reads (Claude Code, Codex, Gemini CLI, OpenCode, unified agent-history JSON, OPA, or a ChatGPT, Claude.ai or Open WebUI export)')


async function readSource(format: FormatId, source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  switch (format) {
    case 'claude-code':
      return readClaudeCode([{ source }], ctx)
    case 'codex':
      return readCodex(source, ctx)
    case 'gemini':
      return readGemini(source, ctx)
    case 'unified':
      return readUnified(source, ctx)
    case 'opa':
      return readOpa(source, ctx)
    case 'chatgpt':
      return readChatGpt(source, ctx)
    case 'claude-ai':
      return readClaudeAi(source, ctx)
    case 'open-webui':
      return readOpenWebUi(source, ctx)
    case 'opencode': {
      const head = await source.head(16)
      if (typeof head !== 'string' && isSqliteBytes(head)) return openCodeSessions(await readOpenCodeDb(await readBytes(source, ctx.options), ctx), ctx)
      return openCodeSessions(readOpenCodeJson(parseJson(await readText(source, ctx.options)), ctx), ctx)
    }
  }
}

async function readFiles(format: FormatId, files: FileMap, ctx: ImportContext): Promise<SessionImport[]> {
  const list = fileEntries(files)
  if (format === 'claude-code') {
    // The session file first, so sub-agent files link to its Task calls.
    const ordered = list.filter(([p]) => p.endsWith('.jsonl')).sort(([a], [b]) => Number(a.includes('agent-')) - Number(b.includes('agent-')) || (a < b ? -1 : 1))
    // 2.1.x writes `agent-<id>.meta.json` beside each sub-agent file: small, read whole.
    const agentMeta = new Map<string, Obj>()
    for (const [path, contents] of list) {
      const id = /(?:^|\/)agent-([0-9a-z]+)\.meta\.json$/.exec(path)?.[1]
      if (!id) continue
      try {
        const o: unknown = JSON.parse(await readText(new Source(contents), { maxBytes: 1 << 20 }))
        if (isObj(o)) agentMeta.set(id, o)
      } catch {
        ctx.warnings.add('bad-sidecar', `${path} is not a JSON object; ignored`, { file: path })
      }
    }
    return readClaudeCode(ordered.map(([name, c]) => ({ source: new Source(c), name })), ctx, agentMeta)
  }
  if (format === 'opencode') {
    const db = list.find(([p]) => p.endsWith('.db'))
    if (db) return readSource(format, new Source(db[1]), ctx)
    return openCodeSessions(await readOpenCodeFiles(files, ctx), ctx)
  }
  // A folder of single-file transcripts (Codex rollouts, Gemini chats…): each file is one input.
  const sessions: SessionImport[] = []
  for (const [path, contents] of list) {
    const source = new Source(contents)
    const own = await detectSource(source)
    if (own !== format) {
      ctx.warnings.add('not-a-transcript', `${path} is not a ${format} transcript${own ? ` (it looks like ${own})` : ''}; skipped`, { file: path })
      continue
    }
    sessions.push(...(await readSource(format, source, ctx)))
  }
  return sessions
}

/**
 * Reads any supported transcript into Colloquy sessions. Nothing is written anywhere: pass the
 * sessions to `store.importSession`, or use `importInto`, which validates every session first.
 */
export async function importTranscript(input: TranscriptInput, options: ImportOptions = {}): Promise<ImportResult> {
  const ctx = new ImportContext(options)
  let format: FormatId
  let sessions: SessionImport[]
  if (isFileMap(input)) {
    format = options.format ?? (await formatOfFiles(input)) ?? (() => { throw unknown() })()
    sessions = await readFiles(format, input, ctx)
  } else {
    const source = new Source(input)
    format = options.format ?? (await detectSource(source)) ?? (() => { throw unknown() })()
    sessions = await readSource(format, source, ctx)
  }
  if (sessions.length === 0) ctx.warnings.add('empty', 'the input holds no session')
  return { format, sessions, warnings: ctx.warnings.list(), skipped: ctx.skipped.counts, attachments: ctx.attachments }
}
