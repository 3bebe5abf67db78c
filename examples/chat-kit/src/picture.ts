import { pick, seeded } from './random.js'

const palettes = [
  ['#0f172a', '#38bdf8', '#f472b6', '#facc15'],
  ['#1e1b4b', '#a78bfa', '#34d399', '#fb7185'],
  ['#052e16', '#86efac', '#fde047', '#60a5fa'],
  ['#3b0764', '#f0abfc', '#fdba74', '#67e8f9'],
] as const

/**
 * A small abstract SVG picture, the same for the same seed: what the local model "draws". It goes
 * into an `image` block as base64, like bytes a real model would return.
 */
export function picture(seed: number, width = 320, height = 200): { mime: 'image/svg+xml'; data: string } {
  const rng = seeded(seed)
  const [bg, ...inks] = pick(rng, palettes)
  const shapes: string[] = []
  for (let n = 0; n < 7; n++) {
    const ink = pick(rng, inks)
    const x = Math.round(rng() * width)
    const y = Math.round(rng() * height)
    const size = Math.round(14 + rng() * 60)
    const opacity = (0.45 + rng() * 0.5).toFixed(2)
    shapes.push(
      rng() < 0.6
        ? `<circle cx="${x}" cy="${y}" r="${size}" fill="${ink}" fill-opacity="${opacity}"/>`
        : `<rect x="${x - size}" y="${y - size / 2}" width="${size * 2}" height="${size}" rx="8" fill="${ink}" fill-opacity="${opacity}" transform="rotate(${Math.round(rng() * 90 - 45)} ${x} ${y})"/>`,
    )
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><rect width="100%" height="100%" fill="${bg}"/>${shapes.join('')}</svg>`
  // The markup is ASCII only, so btoa (in browsers and Node 20) encodes it directly.
  return { mime: 'image/svg+xml', data: btoa(svg) }
}
