import type { Store } from '@colloquy/core'
import type { FormatError, ImportWarning, Progress, SqliteOptions } from '@colloquy/formats'
import { displayTitle } from 'chat-kit'
import { useCallback, useEffect, useRef, useState } from 'react'
import wasmUrl from 'sql.js/dist/sql-wasm-browser.wasm?url'

// Transcripts from other tools (Claude Code, Codex, Gemini CLI, OpenCode, unified JSON, OPA) and
// chat history exported from ChatGPT, Claude.ai and Open WebUI (one chat per conversation)
// into the store, one file at a time. The importer streams the file and writes all or nothing;
// this only queues the files and keeps what the panel shows about each. The importers load on
// the first import, so they cost the app's first paint nothing.

/**
 * sql.js finds its wasm here (OpenCode databases only; sql.js loads on the first one). One
 * object for the page: the importer keeps its sql.js instance while it gets the same options.
 */
const SQLITE: SqliteOptions = { locateFile: () => wasmUrl }

export type ImportState = 'waiting' | 'read' | 'write' | 'done' | 'error'

export interface ImportedSession {
  session_id: string
  title: string
  entries: number
}

export interface ImportJob {
  id: number
  name: string
  /** `read`: bytes of the file so far; `write`: entries written so far. */
  state: ImportState
  done: number
  total: number | undefined
  /** Once done: the sessions written, the main one first (sub-agent runs follow). */
  sessions: ImportedSession[]
  warnings: ImportWarning[]
  error: string | null
}

/** A dropped or picked file; `folder` when it is a directory (read as a file it fails). */
export interface PickedFile {
  file: File
  folder?: boolean
}

const NOTHING = 'Nothing was imported.'

const isFormatError = (e: unknown): e is FormatError =>
  e instanceof Error && e.name === 'FormatError' && typeof (e as { code?: unknown }).code === 'string'

/** What went wrong, for people: the error code dropped, and what it means for their data. */
export function importErrorText(e: unknown): string {
  if (isFormatError(e)) {
    if (e.code === 'format/unknown') {
      return `Not a transcript this app can read (Claude Code, Codex, Gemini CLI, OpenCode, unified agent-history JSON, OPA, or a ChatGPT, Claude.ai or Open WebUI export). ${NOTHING}`
    }
    const text = e.message.slice(e.code.length + 2).replace(/;?\s*nothing was written\.?$/i, '')
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}. ${NOTHING}`
  }
  if (e instanceof DOMException && (e.name === 'NotFoundError' || e.name === 'NotReadableError')) {
    return `The file could not be read (moved, or not a regular file). ${NOTHING}`
  }
  return `${e instanceof Error ? e.message : String(e)}. ${NOTHING}`
}

export interface TranscriptImport {
  jobs: ImportJob[]
  add(files: readonly PickedFile[]): void
  dismiss(id: number): void
}

/**
 * The import queue: each file is imported after the one before it, with its progress (bytes
 * read, then entries written) shown at most once a frame. `onImported` gets the main session of
 * each file that imported.
 */
export function useTranscriptImport(
  store: Store,
  onImported: (session_id: string) => void,
): TranscriptImport {
  const [jobs, setJobs] = useState<ImportJob[]>([])
  const queue = useRef<Promise<void>>(Promise.resolve())
  const nextId = useRef(1)
  const opened = useRef(onImported)
  useEffect(() => {
    opened.current = onImported
  }, [onImported])

  const patch = useCallback((id: number, change: Partial<ImportJob>) => {
    setJobs((list) => list.map((j) => (j.id === id ? { ...j, ...change } : j)))
  }, [])

  const run = useCallback(
    async (id: number, { file, folder }: PickedFile): Promise<void> => {
      if (folder) {
        patch(id, {
          state: 'error',
          error: `A folder: drop or pick the transcript files inside it. ${NOTHING}`,
        })
        return
      }
      let latest: Progress | null = null
      let frame = 0
      const onProgress = (p: Progress): void => {
        latest = p
        if (frame) return
        frame = requestAnimationFrame(() => {
          frame = 0
          if (latest) patch(id, { state: latest.phase, done: latest.done, total: latest.total })
        })
      }
      try {
        patch(id, { state: 'read', done: 0, total: file.size })
        const { importInto } = await import('@colloquy/formats')
        const result = await importInto(store, file, { onProgress, sqlite: SQLITE })
        const titles = new Map(result.sessions.map((s) => [s.meta.session_id, s.meta.title]))
        const sessions = result.written.map((w) => ({
          session_id: w.session_id,
          title: displayTitle(titles.get(w.session_id)),
          entries: w.entries,
        }))
        cancelAnimationFrame(frame)
        if (sessions.length === 0) {
          patch(id, {
            state: 'error',
            warnings: result.warnings,
            error: `The file holds no conversation. ${NOTHING}`,
          })
          return
        }
        patch(id, { state: 'done', done: 0, total: undefined, sessions, warnings: result.warnings })
        opened.current(sessions[0].session_id)
      } catch (e) {
        cancelAnimationFrame(frame)
        patch(id, { state: 'error', error: importErrorText(e) })
      }
    },
    [store, patch],
  )

  const add = useCallback(
    (files: readonly PickedFile[]) => {
      const added: ImportJob[] = files.map(({ file }) => ({
        id: nextId.current++,
        name: file.name,
        state: 'waiting',
        done: 0,
        total: undefined,
        sessions: [],
        warnings: [],
        error: null,
      }))
      setJobs((list) => [...list, ...added])
      files.forEach((f, i) => {
        queue.current = queue.current.then(() => run(added[i].id, f))
      })
    },
    [run],
  )

  const dismiss = useCallback((id: number) => setJobs((list) => list.filter((j) => j.id !== id)), [])

  return { jobs, add, dismiss }
}
