// Base64 without Node's Buffer, so the same code runs in the browser.

export function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64.replace(/\s+/g, ''))
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

export function toBase64(bytes: Uint8Array): string {
  let bin = ''
  const step = 0x8000
  for (let i = 0; i < bytes.length; i += step) bin += String.fromCharCode(...bytes.subarray(i, i + step))
  return btoa(bin)
}

/** `data:<mime>;base64,<data>` split, or undefined for anything else. */
export function parseDataUrl(url: string): { mime: string; data: string } | undefined {
  const m = /^data:([^;,]*)(;[^,]*)?,/.exec(url)
  if (!m) return undefined
  const body = url.slice(m[0].length)
  if ((m[2] ?? '').includes(';base64')) return { mime: m[1] || 'application/octet-stream', data: body }
  // Percent-encoded text payloads are re-encoded so every image block carries base64.
  return { mime: m[1] || 'text/plain', data: toBase64(new TextEncoder().encode(decodeURIComponent(body))) }
}
