// Attachment bytes between their wire form (standard padded base64) and what is stored (Blob).

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const LOOKUP = (() => {
  const t = new Int16Array(128).fill(-1)
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i
  return t
})()

/**
 * Decodes standard base64 with padding, strictly (what the contract's engine accepts): no
 * whitespace, no URL alphabet, length a multiple of 4, padding only at the end, unused bits of
 * the last symbol zero. Returns undefined for anything else.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  const out = new Uint8Array((text.length / 4) * 3 - pad)
  let o = 0
  for (let i = 0; i < text.length; i += 4) {
    const last = i + 4 === text.length
    const n = last ? 4 - pad : 4
    let acc = 0
    for (let k = 0; k < 4; k++) {
      let v = 0
      if (k < n) {
        const c = text.charCodeAt(i + k)
        v = c < 128 ? LOOKUP[c] : -1
        if (v < 0) return undefined
      }
      acc = (acc << 6) | v
    }
    out[o++] = (acc >> 16) & 0xff
    if (n > 2) out[o++] = (acc >> 8) & 0xff
    if (n > 3) out[o++] = acc & 0xff
    // Non-canonical encodings (stray bits after the last byte) are refused, as the contract's engine does.
    if (last && ((n === 2 && (acc & 0xffff) !== 0) || (n === 3 && (acc & 0xff) !== 0))) return undefined
  }
  return out
}

export function encodeBase64(bytes: Uint8Array): string {
  let out = ''
  // Chunks of 3 bytes per 4 symbols; a string builder per 32K symbols keeps 50 MB affordable.
  const parts: string[] = []
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i]
    const b = i + 1 < bytes.length ? bytes[i + 1] : 0
    const c = i + 2 < bytes.length ? bytes[i + 2] : 0
    const n = (a << 16) | (b << 8) | c
    out += ALPHABET[(n >> 18) & 63] + ALPHABET[(n >> 12) & 63]
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63] : '='
    out += i + 2 < bytes.length ? ALPHABET[n & 63] : '='
    if (out.length >= 32768) {
      parts.push(out)
      out = ''
    }
  }
  parts.push(out)
  return parts.join('')
}

/** Lowercase hex sha256 (Web Crypto: browsers, Node ≥ 19, workers). */
export async function sha256Hex(bytes: Uint8Array | ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as BufferSource))
  let hex = ''
  for (const b of digest) hex += b.toString(16).padStart(2, '0')
  return hex
}

export async function blobBytes(blob: Blob): Promise<Uint8Array> {
  return new Uint8Array(await blob.arrayBuffer())
}
