import { unzipSync, zipSync, type Zippable } from 'fflate'
import { FormatError } from '../errors.js'
import { sizeText } from './source.js'

// ZIP through fflate, with the checks an archive from anywhere needs before anything is
// inflated: safe names, a bounded number of entries, and a budget of declared sizes.
// fflate inflates each entry into a buffer of its declared size, so the budget bounds memory
// even when a header lies about it.

export interface ZipLimits {
  /** Total uncompressed bytes of the entries extracted. */
  maxBytes: number
  /** Entries in the archive (listed, not only extracted). */
  maxEntries?: number
}

const MAX_ENTRIES = 10_000
/** Deflate tops out near 1032:1; real text is far below. Past this, on a big entry, it is a bomb. */
const MAX_RATIO = 500
const RATIO_FLOOR = 1 << 20

/** An archive path that cannot escape the archive: relative, `/`-separated, no `..`. */
export function safePath(name: string): boolean {
  if (
    name === '' ||
    name.startsWith('/') ||
    name.includes('\\') ||
    /^[a-zA-Z]:/.test(name) ||
    name.includes('\0')
  )
    return false
  return !name.split('/').some((seg) => seg === '..')
}

const unsafe = (name: string): FormatError =>
  new FormatError(
    'format/unsafe_archive',
    `archive entry ${JSON.stringify(name)} has an unsafe path (absolute, \\-separated or with ..); the archive is refused`,
  )

/** Names of every entry, after checking each is safe. */
export function listZip(bytes: Uint8Array, limits: ZipLimits): string[] {
  const names: string[] = []
  unzip(bytes, () => false, limits, names)
  return names
}

/** The entries `want` selects, inflated, within `limits`. */
export function readZip(
  bytes: Uint8Array,
  want: (name: string) => boolean,
  limits: ZipLimits,
): Record<string, Uint8Array> {
  return unzip(bytes, want, limits, [])
}

function unzip(
  bytes: Uint8Array,
  want: (name: string) => boolean,
  limits: ZipLimits,
  names: string[],
): Record<string, Uint8Array> {
  let budget = limits.maxBytes
  const maxEntries = limits.maxEntries ?? MAX_ENTRIES
  try {
    return unzipSync(bytes, {
      filter(file) {
        if (!safePath(file.name)) throw unsafe(file.name)
        names.push(file.name)
        if (names.length > maxEntries)
          throw new FormatError(
            'format/unsafe_archive',
            `the archive has more than ${maxEntries} entries; refused`,
          )
        if (!want(file.name)) return false
        if (file.originalSize > RATIO_FLOOR && file.originalSize > file.size * MAX_RATIO) {
          throw new FormatError(
            'format/unsafe_archive',
            `archive entry ${file.name} expands ${Math.round(file.originalSize / Math.max(1, file.size))}:1 (a ZIP bomb?); refused`,
          )
        }
        budget -= file.originalSize
        if (budget < 0)
          throw new FormatError(
            'format/too_large',
            `the archive expands to more than ${sizeText(limits.maxBytes)} (raise maxBytes to import it)`,
          )
        return true
      },
    })
  } catch (e) {
    if (e instanceof FormatError) throw e
    throw new FormatError('format/invalid', `not a readable ZIP archive (${(e as Error).message})`, {
      cause: e,
    })
  }
}

export function writeZip(files: Zippable): Uint8Array<ArrayBuffer> {
  return zipSync(files, { level: 6 })
}
