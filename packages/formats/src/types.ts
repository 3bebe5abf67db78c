import type { SessionImport } from '@colloquy/core'
import type { ReadOptions } from './input/source.js'
import type { ImportWarning } from './import/warnings.js'

export type FormatId =
  'claude-code' | 'codex' | 'gemini' | 'opencode' | 'unified' | 'opa' | 'chatgpt' | 'claude-ai' | 'open-webui'
export const FORMATS: readonly FormatId[] = [
  'claude-code',
  'codex',
  'gemini',
  'opencode',
  'unified',
  'opa',
  'chatgpt',
  'claude-ai',
  'open-webui',
]

/**
 * File bytes an import found (an OPA `file` attachment, a PDF a transcript inlined). The
 * session's `file` block names it by `attachment_id`; the caller stores the bytes.
 */
export interface ImportedAttachment {
  session_id: string
  attachment_id: string
  name: string
  mime: string
  data: Uint8Array
}

export interface ImportResult {
  format: FormatId
  /** Ready for `store.importSession`; the first is the main session, sub-agent runs follow. */
  sessions: SessionImport[]
  /** What could not be mapped as-is, and what was done instead. */
  warnings: ImportWarning[]
  /** Records left out on purpose (bookkeeping, UI duplicates), counted by kind. */
  skipped: Record<string, number>
  attachments: ImportedAttachment[]
}

/** Where sql.js finds its WebAssembly file (only needed for OpenCode's SQLite database). */
export interface SqliteOptions {
  /** Like sql.js's own option: file name → URL (browser) or path. */
  locateFile?: (file: string) => string
  /** The wasm bytes themselves, when the caller already has them. */
  wasmBinary?: ArrayBuffer | Uint8Array
}

export interface ImportOptions extends ReadOptions {
  /** Skip detection. */
  format?: FormatId
  sqlite?: SqliteOptions
  /** Clock for `created_at` when a format has no time at all; default `Date.now`. */
  now?: () => number
}
