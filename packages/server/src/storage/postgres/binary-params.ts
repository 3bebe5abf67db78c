/**
 * Statement parameters in PostgreSQL's binary format, built here in slices. The `pg` driver
 * encodes a statement's parameters in one go when it sends it: an array becomes a literal with
 * every element escaped (`{"…","…"}`), then is measured and copied as UTF-8, all in one turn of
 * the event loop; for a large commit's statement (a megabyte of entries and metas, or the
 * events of a 1,000-change push) that turn held the loop for tens of milliseconds. A `Buffer`
 * parameter is sent as it is (binary format), a copy: so a large commit's parameters are built
 * as Buffers here, with `built` told the characters of each value (it lets other requests run
 * once a slice's worth was built), and the driver has nothing left to encode.
 *
 * The binary formats are PostgreSQL's `array_send` (a one-dimensional array, lower bound 1),
 * `textsend` (UTF-8 bytes; `json`'s is the same), `int8send` (big-endian) and `boolsend` (one byte).
 */

/** The element types the commit's statements use, with their type OIDs (`pg_type`). */
const OIDS = { text: 25, json: 114, int8: 20, bool: 16 } as const
export type ElementType = keyof typeof OIDS

type ElementOf<T extends ElementType> = T extends 'int8' ? number : T extends 'bool' ? boolean : string

/** Told the characters (or about the bytes) of each value built: lets other requests run between slices. */
export type Built = (chars: number) => Promise<void>

/** A Buffer that grows as bytes are appended (doubling: each byte is copied a bounded number of times). */
class Bytes {
  buf: Buffer
  at = 0

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(Math.max(64, capacity))
  }

  room(n: number): void {
    if (this.at + n <= this.buf.length) return
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(next, 0, 0, this.at)
    this.buf = next
  }

  int32(n: number): void {
    this.room(4)
    this.at = this.buf.writeInt32BE(n, this.at)
  }

  /** UTF-8 of `s` (at most 3 bytes per UTF-16 unit). */
  text(s: string): number {
    this.room(3 * s.length)
    const n = this.buf.write(s, this.at, 'utf8')
    this.at += n
    return n
  }

  done(): Buffer {
    return this.buf.subarray(0, this.at)
  }
}

/**
 * `values` as an array parameter of element type `type` (null elements allowed), in binary
 * format: give it to the driver in place of the array, for a `$n::type[]` parameter.
 */
export async function arrayParam<T extends ElementType>(
  type: T,
  values: ReadonlyArray<ElementOf<T> | null>,
  built: Built,
): Promise<Buffer> {
  const out = new Bytes(20 + values.length * 12)
  out.int32(values.length ? 1 : 0) // dimensions (an empty array has none)
  out.int32(values.some((v) => v === null) ? 1 : 0) // has nulls
  out.int32(OIDS[type])
  if (values.length) {
    out.int32(values.length)
    out.int32(1) // lower bound
  }
  for (const v of values) {
    if (v === null) {
      out.int32(-1)
      continue
    }
    if (type === 'int8') {
      out.int32(8)
      out.room(8)
      out.at = out.buf.writeBigInt64BE(BigInt(v as number), out.at)
      await built(8)
    } else if (type === 'bool') {
      out.int32(1)
      out.room(1)
      out.buf[out.at++] = v ? 1 : 0
      await built(1)
    } else {
      const s = v as string
      // The length goes before the bytes: written once they are (into the buffer as it is then).
      out.int32(0)
      const at = out.at - 4
      const n = out.text(s)
      out.buf.writeInt32BE(n, at)
      await built(s.length)
    }
  }
  return out.done()
}

/**
 * The text `open + parts.join(sep) + close` as a `text` or `json` parameter in binary format
 * (its UTF-8 bytes), built part by part: a large JSON array is sent without ever being one string.
 */
export async function textParam(
  parts: readonly string[],
  built: Built,
  { open = '', sep = '', close = '' }: { open?: string; sep?: string; close?: string } = {},
): Promise<Buffer> {
  const out = new Bytes(parts.reduce((n, p) => n + p.length, open.length + close.length + parts.length))
  out.text(open)
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out.text(sep)
    out.text(parts[i])
    await built(parts[i].length)
  }
  out.text(close)
  return out.done()
}
