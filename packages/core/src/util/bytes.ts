// Attachment bytes between their wire form (standard padded base64) and what is stored (Blob).

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const LOOKUP = (() => {
  const t = new Int16Array(128).fill(-1)
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i
  return t
})()

/** ES2026's base64 on Uint8Array, where the runtime has it (not in ES2023's lib yet). */
const native = Uint8Array as unknown as {
  fromBase64?: (text: string, options: { lastChunkHandling: 'strict' }) => Uint8Array
}

/**
 * Decodes standard base64 with padding, strictly (what the contract's engine accepts): no
 * whitespace, no URL alphabet, length a multiple of 4, padding only at the end, unused bits of
 * the last symbol zero. Returns undefined for anything else.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  const size = (text.length / 4) * 3 - pad
  if (native.fromBase64) {
    // The runtime's decoder, as strict: 'strict' refuses missing padding and stray bits, and a
    // text holding whitespace (which it skips) decodes to fewer bytes than its length promises.
    let out: Uint8Array
    try {
      out = native.fromBase64(text, { lastChunkHandling: 'strict' })
    } catch {
      return undefined
    }
    return out.length === size ? out : undefined
  }
  const out = new Uint8Array(size)
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
  // The runtime's encoder where there is one (Chromium 140+, Firefox 133+, Safari 18.2+): one flat
  // string, where the loop below builds it of thousands of small ones (sealing 10,000 entries
  // in one commit spent more time collecting them than encrypting).
  const own = bytes as Uint8Array & { toBase64?: () => string }
  if (typeof own.toBase64 === 'function') return own.toBase64()
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

/** `pieces` joined into one array (the piece itself when there is one: no copy). */
export function concatBytes(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0))
  let to = 0
  for (const p of pieces) {
    out.set(p, to)
    to += p.byteLength
  }
  return out
}
