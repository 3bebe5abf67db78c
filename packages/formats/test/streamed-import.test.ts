import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import { importInto, importTranscript, readSession } from '../src/index.js'
import { SAMPLES, sample } from './helpers.js'

// The streaming path (a ReadableStream in small chunks, lines and UTF-8 characters split across
// them) must give the very sessions the whole-file path gives (the file as one string) for every
// real sample. Both are written the same way (store.importSession, through core's incremental
// import): what differs is how the bytes are read.

const files = readdirSync(fileURLToPath(SAMPLES), { recursive: true, withFileTypes: true })
  .filter((d) => d.isFile() && d.name !== 'README.md' && !d.name.endsWith('.meta.json'))
  .map((d) =>
    `${d.parentPath.slice(fileURLToPath(SAMPLES).length).replace(/^\/?/, '')}/${d.name}`.replace(/^\//, ''),
  )
  // One publisher's wrapper (opencode) is no transcript as it stands; the empty session file imports nothing.
  .filter((rel) => !rel.startsWith('opencode/') && sample(rel).byteLength > 0)

/** The bytes as a stream of `size`-byte chunks (an odd size: chunks end mid-line and mid-character). */
const streamOf = (bytes: Uint8Array, size = 4093): ReadableStream<Uint8Array> => {
  let at = 0
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.byteLength) return c.close()
      c.enqueue(bytes.slice(at, (at += size)))
    },
  })
}

const fresh = (): Promise<Store> =>
  createStore({ storage: memoryStorage(), multiTab: false, now: () => 1_700_000_000_000 })

describe('streamed imports give the sessions of whole-file imports', () => {
  it('covers the samples', () => expect(files.length).toBeGreaterThan(25))

  for (const rel of files) {
    it(rel, async () => {
      const bytes = sample(rel)
      const options = { now: () => 1_700_000_000_000 }
      const whole = await fresh()
      const streamed = await fresh()
      const a = await importInto(whole, new TextDecoder().decode(bytes), options)
      const b = await importInto(streamed, streamOf(bytes), options)
      expect(b.written).toEqual(a.written)
      expect(b.warnings).toEqual(a.warnings)
      for (const { session_id, entries } of a.written) {
        const s = await readSession(streamed, session_id)
        expect(s).toEqual(await readSession(whole, session_id))
        expect(s.entries).toHaveLength(entries)
      }
      // And what was stored is what the reader made, checked by the one validator.
      const read = await importTranscript(streamOf(bytes), options)
      for (const s of read.sessions) {
        const stored = await readSession(streamed, s.meta.session_id)
        expect(stored.meta).toEqual(checkImport(s).meta)
        // Inline images go to the attachment store (the entry then names them): compared above, through readSession.
        if (
          !s.attachments?.length &&
          !read.attachments.length &&
          !JSON.stringify(s.entries).includes(`"type":"image"`)
        )
          expect(new Map(stored.entries.map((e) => [e.id, e]))).toEqual(
            new Map(checkImport(s).entries.map((e) => [e.id, e])),
          )
      }
    })
  }
})
