import type { Store } from '@colloquy/core'
import type { Exporter } from '@colloquy/formats'

export type { Exporter }
import { displayTitle } from './text.js'

/**
 * What a chat can be exported as: every format `@colloquy/formats` writes (its `EXPORTERS`),
 * loaded on first use like the importers (most visits never export).
 */
export async function exportFormats(): Promise<readonly Exporter[]> {
  return (await import('@colloquy/formats')).EXPORTERS
}

/**
 * A file name from a session title: characters file systems refuse (and control characters)
 * become spaces, leading and trailing dots and spaces go, and it stays under 80 characters.
 */
export function fileNameFor(title: string, extension: string): string {
  const base = displayTitle(title)
    // eslint-disable-next-line no-control-regex -- control characters are what a file name must not hold
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

/** A stored session downloaded as `exporter` writes it, named after the session's title. */
export async function exportChat(store: Store, session_id: string, exporter: Exporter): Promise<void> {
  const { readSession } = await import('@colloquy/formats')
  const session = await readSession(store, session_id)
  download(
    new Blob([exporter.write(session)], { type: exporter.mime }),
    fileNameFor(session.meta.title, exporter.extension),
  )
}
