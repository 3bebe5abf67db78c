import type { SessionImport } from '@colloquy/core'
import { readClaudeCode } from '../claude-code/import.js'
import { readCodex } from '../codex/import.js'
import { readGemini } from '../gemini/import.js'
import { openCodeSessions } from '../opencode/import.js'
import { readOpenCodeDb } from '../opencode/sqlite.js'
import { readOpenCodeFiles, readOpenCodeJson } from '../opencode/storage.js'
import { readUnified } from '../unified/import.js'
import { readOpa } from '../opa/import.js'
import { readChatGpt } from '../chatgpt/import.js'
import { readClaudeAi } from '../claude-ai/import.js'
import { readOpenWebUi } from '../open-webui/import.js'
import { ImportContext } from './context.js'
import { detectSource, formatOfFiles, isBlank, isSqliteBytes } from '../input/detect.js'
import { linkGeminiAgents, type GeminiFile } from '../gemini/agents.js'
import { FormatError } from '../errors.js'
import { parseJson } from '../input/records.js'
import {
  fileEntries,
  isFileMap,
  readBytes,
  readText,
  Source,
  type FileContents,
  type FileMap,
  type TranscriptInput,
} from '../input/source.js'
import { FORMATS, type FormatId, type ImportOptions, type ImportResult } from '../types.js'
import { isObj, type Obj } from '../values.js'

const unknown = (): FormatError =>
  new FormatError(
    'format/unknown',
    'not a transcript this package reads (Claude Code, Codex, Gemini CLI, OpenCode, unified agent-history JSON, OPA, or a ChatGPT, Claude.ai or Open WebUI export)',
  )

const empty = (what: string): FormatError =>
  new FormatError('format/empty', `${what}: there is no transcript in it`)

/** The formats whose input is one file read by one function. */
const SINGLE_FILE_READERS: Record<
  Exclude<FormatId, 'claude-code' | 'opencode' | 'gemini'>,
  (source: Source, ctx: ImportContext) => Promise<SessionImport[]>
> = {
  codex: readCodex,
  unified: readUnified,
  opa: readOpa,
  chatgpt: readChatGpt,
  'claude-ai': readClaudeAi,
  'open-webui': readOpenWebUi,
}

async function readSource(format: FormatId, source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  if (format === 'claude-code') return readClaudeCode([{ source }], ctx)
  if (format === 'gemini') return linkGeminiAgents([{ sessions: await readGemini(source, ctx) }], ctx)
  if (format === 'opencode') {
    const head = await source.head(16)
    if (typeof head !== 'string' && isSqliteBytes(head))
      return openCodeSessions(await readOpenCodeDb(await readBytes(source, ctx.options), ctx), ctx)
    return openCodeSessions(readOpenCodeJson(parseJson(await readText(source, ctx.options)), ctx), ctx)
  }
  return SINGLE_FILE_READERS[format](source, ctx)
}

async function readFiles(format: FormatId, files: FileMap, ctx: ImportContext): Promise<SessionImport[]> {
  const list = fileEntries(files)
  if (format === 'claude-code') {
    // The session file first, so sub-agent files link to its Task calls.
    const ordered = list
      .filter(([p]) => p.endsWith('.jsonl'))
      .sort(([a], [b]) => Number(a.includes('agent-')) - Number(b.includes('agent-')) || (a < b ? -1 : 1))
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
    return readClaudeCode(
      ordered.map(([name, c]) => ({ source: new Source(c), name })),
      ctx,
      agentMeta,
    )
  }
  if (format === 'opencode') {
    const db = list.find(([p]) => p.endsWith('.db'))
    if (db) return readSource(format, new Source(db[1]), ctx)
    return openCodeSessions(await readOpenCodeFiles(files, ctx), ctx)
  }
  // A folder of single-file transcripts (Codex rollouts, Gemini chats…): each file is one input.
  const read: GeminiFile[] = []
  for (const [path, contents] of list) {
    const source = new Source(contents)
    const own = await detectSource(source)
    if (own !== format) {
      ctx.warnings.add(
        'not-a-transcript',
        `${path} is not a ${format} transcript${own ? ` (it looks like ${own})` : ''}; skipped`,
        { file: path },
      )
      continue
    }
    read.push({
      path,
      sessions: format === 'gemini' ? await readGemini(source, ctx) : await readSource(format, source, ctx),
    })
  }
  // Gemini sub-agent chats sit in a folder named after their parent session.
  return format === 'gemini' ? linkGeminiAgents(read, ctx) : read.flatMap((f) => f.sessions)
}

/**
 * The files of a folder that hold something: an empty one (a session that never started) is
 * skipped with a warning, the same in every format. Judged by size alone, so a tree of
 * thousands of small files is not read twice. A folder of nothing but empty files is empty.
 */
function filledFiles(files: FileMap, ctx: ImportContext): Map<string, FileContents> {
  const list = fileEntries(files)
  const out = new Map<string, FileContents>()
  for (const [path, contents] of list) {
    if (new Source(contents).size === 0)
      ctx.warnings.add('empty-file', `${path} is empty (0 bytes); skipped`, { file: path })
    else out.set(path, contents)
  }
  if (!out.size)
    throw empty(list.length ? 'every file of the folder is empty (0 bytes)' : 'the folder holds no file')
  return out
}

/**
 * Reads any supported transcript into Colloquy sessions. Nothing is written anywhere: pass the
 * sessions to `store.importSession`, or use `importInto`, which validates every session first.
 */
export async function importTranscript(
  input: TranscriptInput,
  options: ImportOptions = {},
): Promise<ImportResult> {
  // A format named by the caller is one of ours, never any key a lookup table happens to have.
  if (options.format !== undefined && !FORMATS.includes(options.format)) {
    throw new FormatError(
      'format/unknown',
      `unknown format ${JSON.stringify(String(options.format)).slice(0, 60)}; expected one of ${FORMATS.join(', ')}`,
    )
  }
  const ctx = new ImportContext(options)
  let format: FormatId
  let sessions: SessionImport[]
  if (isFileMap(input)) {
    const files = filledFiles(input, ctx)
    format =
      options.format ??
      (await formatOfFiles(files)) ??
      (() => {
        throw unknown()
      })()
    sessions = await readFiles(format, files, ctx)
  } else {
    const source = new Source(input)
    if (await isBlank(source))
      throw empty(
        (await source.head(1)).length === 0
          ? 'the input is empty (0 bytes)'
          : 'the input holds only white space',
      )
    format =
      options.format ??
      (await detectSource(source)) ??
      (() => {
        throw unknown()
      })()
    sessions = await readSource(format, source, ctx)
  }
  if (sessions.length === 0) ctx.warnings.add('empty', 'the input holds no session')
  return {
    format,
    sessions,
    warnings: ctx.warnings.list(),
    skipped: ctx.skipped.counts,
    attachments: ctx.attachments,
  }
}
