// Renders the PWA icons (public/icons/icon-{192,512}.png and the maskable 512) without any image
// library: a signed-distance drawing, 4×4 supersampled, written as PNG with node:zlib.
// Run it after changing the drawing: `node scripts/icons.mjs`.
import { writeFileSync } from 'node:fs'
import { deflateSync } from 'node:zlib'

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (buf) => {
  let c = 0xffffffff
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type, data) => {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, 'ascii')
  data.copy(out, 8)
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}
const png = (size, rgba) => {
  const rows = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) rgba.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4)
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 6, 0, 0, 0], 8) // 8-bit RGBA
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

// Distance to a rounded box centred at (cx, cy) with half-size (hw, hh) and corner radius r.
const roundBox = (x, y, cx, cy, hw, hh, r) => {
  const qx = Math.abs(x - cx) - hw + r
  const qy = Math.abs(y - cy) - hh + r
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r
}
const circle = (x, y, cx, cy, r) => Math.hypot(x - cx, y - cy) - r
const mix = (a, b, t) => a.map((v, i) => v + (b[i] - v) * t)

/** Colour at (x, y) in unit coordinates; `inset` shrinks the art for maskable icons' safe zone. */
function shade(x, y, full) {
  const indigo = [79, 70, 229, 255]
  const violet = [147, 51, 234, 255]
  const bg = full ? -1 : roundBox(x, y, 0.5, 0.5, 0.5, 0.5, 0.22)
  if (bg > 0) return [0, 0, 0, 0]
  let c = mix(indigo, violet, (x + y) / 2)
  const s = full ? 0.8 : 1 // maskable icons keep the art inside the central 80%
  const ux = (x - 0.5) / s + 0.5
  const uy = (y - 0.5) / s + 0.5
  // The speech bubble: a rounded box with a tail at the lower left.
  const tail = Math.max(-(ux - 0.27), -(uy - 0.62), ux + uy - 1.02)
  const bubble = Math.min(roundBox(ux, uy, 0.5, 0.46, 0.3, 0.2, 0.12), Math.max(tail, uy - 0.82))
  if (bubble <= 0) c = [255, 255, 255, 255]
  for (const dx of [0.38, 0.5, 0.62]) if (circle(ux, uy, dx, 0.46, 0.045) <= 0) c = indigo
  return c
}

function render(size, full) {
  const rgba = Buffer.alloc(size * size * 4)
  const n = 4
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const acc = [0, 0, 0, 0]
      for (let sy = 0; sy < n; sy++)
        for (let sx = 0; sx < n; sx++) {
          const c = shade((x + (sx + 0.5) / n) / size, (y + (sy + 0.5) / n) / size, full)
          for (let i = 0; i < 3; i++) acc[i] += c[i] * c[3]
          acc[3] += c[3]
        }
      const a = acc[3] / (n * n)
      const o = (y * size + x) * 4
      for (let i = 0; i < 3; i++) rgba[o + i] = acc[3] ? Math.round(acc[i] / acc[3]) : 0
      rgba[o + 3] = Math.round(a)
    }
  return png(size, rgba)
}

const out = new URL('../public/icons/', import.meta.url)
writeFileSync(new URL('icon-192.png', out), render(192, false))
writeFileSync(new URL('icon-512.png', out), render(512, false))
writeFileSync(new URL('maskable-512.png', out), render(512, true))
