import type { Storage } from '../../src/index.js'

/**
 * A Blob that refuses to be read whole (`arrayBuffer`, `bytes`, `text`, `stream`): only its
 * slices (plain Blobs) can be read. What a storage hands the encryption layer as this is read a
 * chunk at a time or not at all.
 */
export class WholeRefused extends Blob {
  override arrayBuffer(): Promise<ArrayBuffer> {
    throw new Error('read whole')
  }
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    throw new Error('read whole')
  }
  override text(): Promise<string> {
    throw new Error('read whole')
  }
  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    throw new Error('read whole')
  }
}

/** `inner`, handing over every attachment's stored bytes as a `WholeRefused` of them. */
export const wholeRefusing = (inner: Storage): Storage => ({
  ...inner,
  attachmentBytes: async (session_id, attachment_id) => {
    const blob = await inner.attachmentBytes!(session_id, attachment_id)
    return blob && new WholeRefused([blob])
  },
})
