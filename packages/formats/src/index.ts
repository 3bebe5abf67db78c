// @colloquy/formats: real agent transcripts in and out of Colloquy sessions, branches kept.
// Browser-safe: nothing here imports Node modules (see `@colloquy/formats/node` for those).

export { importTranscript } from './import/transcript.js'
export { detectFormat } from './input/detect.js'
export { importInto, type ImportIntoResult } from './import/into-store.js'
export { readSession } from './export/read-session.js'
export { exportUnified, type UnifiedExportOptions } from './unified/export.js'
export { exportOpa, type OpaExportOptions } from './opa/export.js'
export { exportChatGpt } from './chatgpt/export.js'
export { exportOpenWebUi } from './open-webui/export.js'
export { exportClaudeAi } from './claude-ai/export.js'
export { EXPORTERS, type Exporter, type ExportFormatId } from './export/exporters.js'
export { FormatError, type FormatErrorCode } from './errors.js'
export type { ImportWarning } from './import/warnings.js'
export type { FileContents, FileMap, Progress, ReadOptions, TranscriptInput } from './input/source.js'
export {
  FORMATS,
  type FormatId,
  type ImportedAttachment,
  type ImportOptions,
  type ImportResult,
  type SqliteOptions,
} from './types.js'
