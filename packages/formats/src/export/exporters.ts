import type { SessionImport } from '@colloquy/core'
import { exportChatGpt } from '../chatgpt/export.js'
import { exportClaudeAi } from '../claude-ai/export.js'
import { exportOpa } from '../opa/export.js'
import { exportOpenWebUi } from '../open-webui/export.js'
import { exportUnified } from '../unified/export.js'

/** What one session can be written as: the `--to` of the CLI, the export menu of an app. */
export interface Exporter {
  /** The CLI's `--to` value. */
  readonly id: 'unified' | 'opa' | 'chatgpt' | 'claude-ai' | 'open-webui'
  /** A human name of the format. */
  readonly label: string
  /** The file name's extension, without the leading dot (`chatgpt.json`: not mistaken for unified JSON). */
  readonly extension: string
  readonly mime: string
  /** True when one file holds several sessions (`write` takes them all); false when it holds one. */
  readonly multi: boolean
  /** One session (or, when `multi`, several) as the file's contents. */
  write(sessions: SessionImport | readonly SessionImport[]): string | Uint8Array<ArrayBuffer>
}

/** One session per file: the first of several. */
const first = (sessions: SessionImport | readonly SessionImport[]): SessionImport =>
  Array.isArray(sessions) ? (sessions as readonly SessionImport[])[0] : (sessions as SessionImport)

/**
 * Every format this package writes, in the order an export menu offers them. The CLI and the
 * apps read this list, so a new exporter shows up everywhere at once.
 */
export const EXPORTERS: readonly Exporter[] = [
  {
    id: 'unified',
    label: 'unified JSON',
    extension: 'json',
    mime: 'application/json',
    multi: true,
    write: (s) => exportUnified(s),
  },
  {
    id: 'opa',
    label: 'OPA archive',
    extension: 'opa',
    mime: 'application/zip',
    multi: false,
    write: (s) => exportOpa(first(s)),
  },
  {
    id: 'chatgpt',
    label: 'ChatGPT JSON',
    extension: 'chatgpt.json',
    mime: 'application/json',
    multi: true,
    write: exportChatGpt,
  },
  {
    id: 'claude-ai',
    label: 'Claude.ai JSON',
    extension: 'claude-ai.json',
    mime: 'application/json',
    multi: true,
    write: exportClaudeAi,
  },
  {
    id: 'open-webui',
    label: 'Open WebUI JSON',
    extension: 'open-webui.json',
    mime: 'application/json',
    multi: true,
    write: exportOpenWebUi,
  },
]

export type ExportFormatId = Exporter['id']
