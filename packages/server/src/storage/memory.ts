import { memoryStorage as coreMemoryStorage, type Storage } from '@colloquy/core'

export interface MemoryStorageOptions {
  /**
   * Serve heads on demand (`Storage.paged`) as PostgreSQL and IndexedDB do: the server's store
   * then holds a bounded working set of heads (`createServer({ maxHeads })`).
   */
  paged?: boolean
}

/**
 * The core's in-memory storage for the server (`--memory`, tests, demos). The server hands a
 * storage the bytes of a streamed upload as a Blob backed by a spool file that lives only for
 * the request, and the core's memory storage keeps the Blob it is given: here each put's bytes
 * are copied into memory inside the commit, as the other storages copy them to disk.
 */
export function memoryStorage(options: MemoryStorageOptions = {}): Storage {
  const inner = coreMemoryStorage(options)
  return {
    ...inner,
    transact: (work) =>
      inner.transact(async (reader) => {
        const ws = await work(reader)
        if (!ws.blobs?.some((b) => b.op === 'put')) return ws
        const blobs = await Promise.all(
          ws.blobs.map(async (b) =>
            b.op === 'put'
              ? { ...b, bytes: new Blob([await b.bytes.arrayBuffer()], { type: b.bytes.type }) }
              : b,
          ),
        )
        return { ...ws, blobs }
      }),
  }
}
