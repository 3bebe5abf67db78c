import { sep } from 'node:path'

/**
 * The file storage's grammar of names: every path it touches, relative to its data directory,
 * is one of these places. `B` is `boundedName` (file-names.ts): `<slug>+<sha256 hex>`, at most
 * 97 bytes. A place the storage reads on open (a directory it walks, a file it parses) is a
 * place data-dir.test.ts plants bad entries in; data-dir-names.test.ts checks both lists
 * against the calls the storage makes, so a new place cannot go unchecked.
 */
const B = '[a-z0-9-]{0,32}\\+[0-9a-f]{64}'
const TMP = '(\\.tmp-\\d+-\\d+)?'

export interface Place {
  readonly name: string
  readonly path: RegExp
  /** Read when the storage opens: a bad entry here must never stop a start. */
  readonly readOnOpen: boolean
}

export const PLACES: readonly Place[] = [
  { name: 'data directory', path: /^$/, readOnOpen: true },
  { name: 'session file', path: new RegExp(`^${B}\\.jsonl$`), readOnOpen: true },
  { name: 'bookkeeping', path: /^\.colloquy$/, readOnOpen: false },
  { name: 'journal', path: /^\.colloquy\/journal\.jsonl(\.tmp)?$/, readOnOpen: true },
  { name: 'head index', path: /^\.colloquy\/heads\.jsonl(\.tmp)?$/, readOnOpen: true },
  { name: 'orphans', path: new RegExp(`^\\.colloquy/orphans(/${B}(\\.\\d+)?)?$`), readOnOpen: false },
  { name: 'attachments', path: /^attachments$/, readOnOpen: true },
  { name: 'attachment folder', path: new RegExp(`^attachments/${B}\\.d$`), readOnOpen: true },
  {
    name: 'attachment metadata',
    path: new RegExp(`^attachments/${B}\\.d/${B}\\.json${TMP}$`),
    readOnOpen: true,
  },
  // Read on demand (a download, a fork's copy), never on open.
  {
    name: 'attachment bytes',
    path: new RegExp(`^attachments/${B}\\.d/[0-9a-f]{64}\\.bin${TMP}$`),
    readOnOpen: false,
  },
]

/** The place a relative path is, or undefined when it is of no name the storage writes. */
export function placeOf(rel: string): string | undefined {
  const path = rel.split(sep).join('/')
  return PLACES.find((p) => p.path.test(path))?.name
}
