import type { SessionEntry } from '@colloquy/core'
import {
  Keyring,
  openAttachmentBytes,
  openEntry,
  sealAttachmentBytes,
  sealEntry,
  type SealedEntry,
} from '@colloquy/core/crypto'
import type { BenchRow, Workload } from '../types.js'
import { chain } from '../subjects/data.js'
import { median, now } from '../subjects/measure.js'

// The encryption foundation's own costs (`@colloquy/core/crypto`, docs/encryption.md), before it
// is wired into the store: key derivation at unlock, sealing and opening W1-sized entries, and a
// 1 MB attachment. Web Crypto in Chromium (where a store seals) and in Node (a server-side tool).

const DERIVATIONS = 5
const ENTRIES = 2000
const ROUNDS = 5
const MB = 1024 * 1024
const SID = 's_c1'

async function measure(env: string): Promise<BenchRow[]> {
  const row = (
    metric: string,
    value: number,
    unit: string,
    better: 'lower' | 'higher',
    note: string,
  ): BenchRow => ({
    id: env === 'chromium' ? 'C1' : 'C1N',
    subject: `colloquy crypto (${env})`,
    metric,
    value,
    unit,
    better,
    note,
  })
  const create: number[] = []
  const open: number[] = []
  let ring: Keyring | undefined
  for (let i = 0; i < DERIVATIONS; i++) {
    let t = now()
    const made = await Keyring.create({ passphrase: `bench ${i}` })
    create.push(now() - t)
    t = now()
    ring = await Keyring.open(made.serialize(), { passphrase: `bench ${i}` })
    open.push(now() - t)
  }
  const keys = ring!
  const entries: SessionEntry[] = chain(ENTRIES, 26)
  const clearBytes = entries.reduce((n, e) => n + JSON.stringify(e).length, 0)
  const seal: number[] = []
  const opened: number[] = []
  let sealedBytes = 0
  for (let r = 0; r < ROUNDS; r++) {
    let t = now()
    const sealed: SealedEntry[] = []
    // One by one, each awaited: a store seals what it writes in its commit, entry by entry.
    for (const e of entries) sealed.push(await sealEntry(keys, SID, e))
    seal.push(now() - t)
    sealedBytes = sealed.reduce((n, e) => n + JSON.stringify(e).length, 0)
    t = now()
    for (const s of sealed) await openEntry(keys, SID, s)
    opened.push(now() - t)
  }
  const bytes = new Uint8Array(MB)
  for (let k = 0; k < MB; k += 4096) bytes[k] = k & 255
  const putMs: number[] = []
  const readMs: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    let t = now()
    const sealed = await sealAttachmentBytes(keys, SID, `a_${r}`, bytes)
    putMs.push(now() - t)
    t = now()
    await openAttachmentBytes(keys, SID, `a_${r}`, sealed)
    readMs.push(now() - t)
  }
  const perSec = (ms: number): number => (ENTRIES / ms) * 1000
  return [
    row(
      'keyring create (PBKDF2 600,000 + 1 data key)',
      median(create),
      'ms',
      'lower',
      `median of ${DERIVATIONS}`,
    ),
    row(
      'keyring open (PBKDF2 600,000 + unwrap) = unlock',
      median(open),
      'ms',
      'lower',
      `median of ${DERIVATIONS}`,
    ),
    row(
      'sealEntry, one by one',
      perSec(median(seal)),
      'entries/s',
      'higher',
      `${ENTRIES} W1 entries (200-500 chars), median of ${ROUNDS}; stored JSON ${(sealedBytes / clearBytes).toFixed(2)}x the clear JSON (padding, IV, tag, base64)`,
    ),
    row(
      'openEntry (checked), one by one',
      perSec(median(opened)),
      'entries/s',
      'higher',
      `the same entries, median of ${ROUNDS}`,
    ),
    row('1 MB attachment sealed', 1000 / median(putMs), 'MB/s', 'higher', `median of ${ROUNDS}`),
    row('1 MB attachment opened', 1000 / median(readMs), 'MB/s', 'higher', `median of ${ROUNDS}`),
  ]
}

const browser: Workload = {
  id: 'C1',
  title: 'encryption foundation: key derivation, sealing and opening (Chromium)',
  env: 'browser',
  run: () => measure('chromium'),
}
const node: Workload = {
  id: 'C1N',
  title: 'encryption foundation: key derivation, sealing and opening (Node)',
  env: 'node',
  run: () => measure('node'),
}

export default [browser, node]
