// OPA (`session/history.json`) attachment naming and the JAR manifest, shared by import and export.

const MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  json: 'application/json',
  csv: 'text/csv',
}

export const mimeOf = (path: string): string =>
  MIME[path.split('.').at(-1)?.toLowerCase() ?? ''] ?? 'application/octet-stream'

export function extensionOf(mime: string): string {
  for (const [ext, m] of Object.entries(MIME)) if (m === mime) return ext
  return 'bin'
}

export const MANIFEST = 'META-INF/MANIFEST.MF'
export const DEFAULT_SESSION_FILE = 'session/history.json'

/** The main section of a JAR manifest (`Name: value`, continuation lines start with a space). */
export function parseManifest(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  let last: string | undefined
  for (const line of text.split(/\r?\n/)) {
    if (line === '') break
    if (line.startsWith(' ') && last) out[last] += line.slice(1)
    else {
      const at = line.indexOf(':')
      if (at <= 0) continue
      last = line.slice(0, at).trim()
      out[last] = line.slice(at + 1).trim()
    }
  }
  return out
}

/** A manifest with lines wrapped at 72 bytes, as the JAR format requires. */
export function writeManifest(fields: Record<string, string>): string {
  const enc = new TextEncoder()
  const lines: string[] = []
  for (const [k, v] of Object.entries(fields)) {
    let line = `${k}: ${v.replace(/[\r\n]+/g, ' ')}`
    let first = true
    while (enc.encode(line).length > (first ? 72 : 71)) {
      // Cut on a character boundary that fits in the byte limit.
      let cut = Math.min(line.length, first ? 72 : 71)
      while (enc.encode(line.slice(0, cut)).length > (first ? 72 : 71)) cut--
      lines.push(first ? line.slice(0, cut) : ` ${line.slice(0, cut)}`)
      line = line.slice(cut)
      first = false
    }
    lines.push(first ? line : ` ${line}`)
  }
  return `${lines.join('\r\n')}\r\n\r\n`
}
