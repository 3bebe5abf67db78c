import type { Store } from '@colloquy/core'
import { displayTitle } from 'chat-kit'

export type ExportKind = 'unified' | 'opa'

/**
 * A file name from a session title: characters file systems refuse (and control characters)
 * become spaces, leading and trailing dots and spaces go, and it stays under 80 characters.
 */
export function fileNameFor(title: string, extension: string): string {
  const base = displayTitle(title)
    .replace(/[\u0000-\u001f\u007f<>:"/\\|?*]+/g, ' ')
    .replace(/\s+/g, ' ')
    .slice(0, 80)
    .replace(/^[\s.]+|[\s.]+$/g, '')
  return `${base || 'chat'}.${extension}`
}

/** Saves a Blob as a download through a temporary `<a download>`. */
export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.hidden = true
  document.body.append(a)
  a.click()
  a.remove()
  // The browser reads the Blob when the download starts, which can be after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

/**
 * A stored session as a file: unified agent-history JSON (every branch) or an OPA archive
 * (the active path), named after the session title.
 */
export async function exportSession(store: Store, session_id: string, kind: ExportKind): Promise<void> {
  // Loaded on first use, like the importers: most visits never export.
  const { exportOpa, exportUnified, readSession } = await import('@colloquy/formats')
  const session = await readSession(store, session_id)
  if (kind === 'unified') {
    download(new Blob([exportUnified(session)], { type: 'application/json' }), fileNameFor(session.meta.title, 'json'))
  } else {
    download(new Blob([exportOpa(session)], { type: 'application/zip' }), fileNameFor(session.meta.title, 'opa'))
  }
}
