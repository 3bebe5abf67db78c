import { concatBytes } from '@colloquy/core/wire'
import { FormatError } from '../errors.js'

/** One file's contents: text, bytes or a Blob (a browser File, or Node's `fs.openAsBlob`). */
export type FileContents = string | Uint8Array | Blob
/** Several files by relative path (`/`-separated): an OpenCode storage tree, a Claude project. */
export type FileMap = ReadonlyMap<string, FileContents> | { readonly [path: string]: FileContents }
/** Everything an importer accepts. */
export type TranscriptInput = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | FileMap

export interface Progress {
  /** `read`: bytes of the input consumed; `write`: entries on disk (see `importInto`). */
  phase: 'read' | 'write'
  done: number
  /** Unknown for streams without a length. */
  total: number | undefined
}

export interface ReadOptions {
  /** Refuse inputs larger than this many bytes; default 256 MiB. */
  maxBytes?: number
  /** Refuse a single JSONL line longer than this; default 64 MiB. */
  maxLineBytes?: number
  onProgress?: (p: Progress) => void
}

// Importers keep what they read (about 2-3x the file in heap once parsed), so the default cap
// keeps a whole import well inside a browser tab's heap. Callers raise it knowingly.
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
const STRING_SLICE = 1 << 20

/** A byte count for messages: `312 bytes`, `4.2 KB`, `512.0 MB`. */
export const sizeText = (n: number): string =>
  n >= 1 << 20 ? `${(n / 2 ** 20).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} bytes`
const mb = sizeText
export const tooLarge = (size: number, max: number): FormatError =>
  new FormatError(
    'format/too_large',
    `input is ${mb(size)}, over the ${mb(max)} limit (raise maxBytes to import it)`,
  )

export const isFileMap = (input: unknown): input is FileMap =>
  input instanceof Map ||
  (typeof input === 'object' &&
    input !== null &&
    !ArrayBuffer.isView(input) &&
    !(input instanceof ArrayBuffer) &&
    !(typeof Blob !== 'undefined' && input instanceof Blob) &&
    !(typeof ReadableStream !== 'undefined' && input instanceof ReadableStream) &&
    Object.getPrototypeOf(input) === Object.prototype)

export function fileEntries(files: FileMap): [string, FileContents][] {
  const list =
    files instanceof Map ? [...files.entries()] : Object.entries(files as Record<string, FileContents>)
  return list.map(([path, c]) => [path.replace(/\\/g, '/').replace(/^\.?\//, ''), c])
}

/**
 * A single input as a byte source that can show its first bytes (for detection) and then be
 * read once from the start, in chunks, whatever it is underneath.
 */
export class Source {
  readonly size: number | undefined
  private stream: ReadableStream<Uint8Array> | undefined
  private buffered: Uint8Array[] = []
  private bufferedBytes = 0
  private streamDone = false

  constructor(private readonly input: Exclude<TranscriptInput, FileMap>) {
    if (typeof input === 'string') this.size = input.length
    else if (input instanceof ArrayBuffer) this.size = input.byteLength
    else if (ArrayBuffer.isView(input)) this.size = input.byteLength
    else if (input instanceof ReadableStream) this.size = undefined
    else this.size = input.size
    if (input instanceof ReadableStream) this.stream = input
  }

  /** Up to `n` leading bytes (or characters for a string), without consuming anything. */
  async head(n: number): Promise<Uint8Array | string> {
    const input = this.input
    if (typeof input === 'string') return input.slice(0, n)
    if (input instanceof ArrayBuffer) return new Uint8Array(input, 0, Math.min(n, input.byteLength))
    if (ArrayBuffer.isView(input)) return input.subarray(0, n)
    if (!(input instanceof ReadableStream)) return new Uint8Array(await input.slice(0, n).arrayBuffer())
    // A stream can be read only once: keep what detection read and replay it in `chunks()`.
    const reader = this.stream!.getReader()
    try {
      while (this.bufferedBytes < n && !this.streamDone) {
        const { done, value } = await reader.read()
        if (done) this.streamDone = true
        else {
          this.buffered.push(value)
          this.bufferedBytes += value.byteLength
        }
      }
    } finally {
      reader.releaseLock()
    }
    return concatBytes(this.buffered).subarray(0, n)
  }

  /** The whole input from the start, in chunks, enforcing `maxBytes` and reporting progress. */
  async *chunks(options: ReadOptions = {}): AsyncGenerator<Uint8Array | string> {
    const max = options.maxBytes ?? DEFAULT_MAX_BYTES
    if (this.size !== undefined && this.size > max) throw tooLarge(this.size, max)
    let done = 0
    const step = (n: number): void => {
      done += n
      if (done > max) throw tooLarge(done, max)
      options.onProgress?.({ phase: 'read', done, total: this.size })
    }
    const input = this.input
    if (typeof input === 'string') {
      for (let i = 0; i < input.length; i += STRING_SLICE) {
        const part = input.slice(i, i + STRING_SLICE)
        step(part.length)
        yield part
      }
      return
    }
    if (input instanceof ArrayBuffer || ArrayBuffer.isView(input)) {
      const bytes =
        input instanceof ArrayBuffer
          ? new Uint8Array(input)
          : new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
      // Decoded and split a slice at a time, like a stream: no 50 MB string at once.
      for (let i = 0; i < bytes.byteLength || i === 0; i += STRING_SLICE) {
        const part = bytes.subarray(i, i + STRING_SLICE)
        step(part.byteLength)
        yield part
        if (bytes.byteLength === 0) break
      }
      return
    }
    const stream = input instanceof ReadableStream ? this.stream! : input.stream()
    for (const b of this.buffered.splice(0)) {
      step(b.byteLength)
      yield b
    }
    if (this.streamDone) return
    const reader = stream.getReader()
    let finished = false
    try {
      for (;;) {
        const { done: end, value } = await reader.read()
        if (end) break
        step(value.byteLength)
        yield value
      }
      finished = true
    } finally {
      // Stop the underlying file read when the consumer gave up early (an error, a limit).
      if (!finished) await reader.cancel().catch(() => {})
      reader.releaseLock()
    }
  }
}

/** Decoded text, chunk by chunk (UTF-8, BOM dropped, characters split across chunks kept). */
export async function* textChunks(source: Source, options: ReadOptions = {}): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8')
  let first = true
  for await (const chunk of source.chunks(options)) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    if (text) first = false
    if (text) yield text
  }
  const tail = decoder.decode()
  if (tail) yield tail
}

export async function readText(source: Source, options: ReadOptions = {}): Promise<string> {
  const parts: string[] = []
  for await (const t of textChunks(source, options)) parts.push(t)
  return parts.join('')
}

export async function readBytes(source: Source, options: ReadOptions = {}): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  const encoder = new TextEncoder()
  for await (const c of source.chunks(options)) parts.push(typeof c === 'string' ? encoder.encode(c) : c)
  return concatBytes(parts)
}

/** A batch of complete lines and the 1-based number of the first one. */
export interface LineBatch {
  first: number
  lines: string[]
}

/**
 * JSONL lines, in batches per chunk read (one promise per chunk, not per line). A line split
 * across chunks is joined once, so a 1 MB image line costs one copy; `\r\n` is accepted.
 */
export async function* lineBatches(source: Source, options: ReadOptions = {}): AsyncGenerator<LineBatch> {
  const maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
  let pending: string[] = []
  let pendingLength = 0
  let next = 1
  for await (const text of textChunks(source, options)) {
    const lines: string[] = []
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      let line = text.slice(start, nl)
      if (pending.length) {
        line = pending.join('') + line
        pending = []
        pendingLength = 0
      }
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line)
      start = nl + 1
    }
    if (start < text.length) {
      pending.push(text.slice(start))
      pendingLength += text.length - start
      if (pendingLength > maxLine) {
        throw new FormatError(
          'format/too_large',
          `line ${next + lines.length} is longer than ${mb(maxLine)} (raise maxLineBytes to import it)`,
        )
      }
    }
    if (lines.length) {
      yield { first: next, lines }
      next += lines.length
    }
  }
  if (pending.length) yield { first: next, lines: [pending.join('')] }
}
