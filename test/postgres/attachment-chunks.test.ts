import { randomBytes } from 'node:crypto'
import { createStore } from '@colloquy/core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { postgresStorage } from '../../packages/server/src/storage/postgres/storage.js'
import { CHUNK_BYTES } from '../../packages/server/src/storage/postgres/attachment-chunks.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// The Blob the PostgreSQL storage hands out for stored bytes, in process: read lazily, a chunk
// per query, every way of reading it agreeing with the bytes that went in.
let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())
/** Byte equality without an element-by-element deep compare of half a megabyte. */
const same = (a: ArrayBuffer | Uint8Array, b: Uint8Array): boolean =>
  Buffer.from(a instanceof Uint8Array ? a : new Uint8Array(a)).equals(b)

it('stored bytes read back whole, sliced anywhere (across chunk edges, from the end) and streamed in chunks', async () => {
  const url = await cluster.createDatabase()
  const store = await createStore({
    storage: postgresStorage({ connectionString: url, pollMs: 60_000 }),
    multiTab: false,
  })
  try {
    const { session_id } = await store.create({ title: 'chunks' })
    const bytes = new Uint8Array(randomBytes(2 * CHUNK_BYTES + 1234))
    const { attachment } = await store.putAttachment({
      session_id,
      file: new File([bytes], 'x.bin', { type: 'application/x-test' }),
    })
    const blob = (await store.getAttachmentBlob(session_id, attachment.attachment_id))!
    expect([blob.size, blob.type]).toStrictEqual([bytes.length, 'application/x-test'])
    expect(same(await blob.arrayBuffer(), bytes)).toBe(true)
    expect(same(await blob.bytes(), bytes)).toBe(true)
    const parts: number[] = []
    for await (const part of blob.stream() as unknown as AsyncIterable<Uint8Array>) parts.push(part.length)
    expect(parts).toStrictEqual([CHUNK_BYTES, CHUNK_BYTES, 1234])
    for (const [from, to] of [
      [CHUNK_BYTES - 10, CHUNK_BYTES + 10],
      [0, 1],
      [5, 5],
      [-100, undefined],
      [2 * CHUNK_BYTES, 10 ** 9],
    ] as const) {
      const part = blob.slice(from, to, 'text/plain')
      expect(part.type).toBe('text/plain')
      expect(same(await part.arrayBuffer(), bytes.slice(from, to))).toBe(true)
      // A slice of a slice stays within its parent.
      expect(same(await part.slice(1, 3).arrayBuffer(), bytes.slice(from, to).slice(1, 3))).toBe(true)
    }
    // Deleted, its bytes are gone: a Blob taken before reads no further.
    await store.delete({ session_id })
    await expect(blob.arrayBuffer()).rejects.toThrow(/gone/)
    expect(await store.getAttachmentBlob(session_id, attachment.attachment_id)).toBeNull()
  } finally {
    await store.close()
  }
})
