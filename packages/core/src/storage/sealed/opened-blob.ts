// An opened attachment as the Blob a read returns. Making a Blob hands its bytes to the
// browser, and reading one back fetches them again (in Chromium, from another process): for an
// attachment just opened, that round trip cost more than the read of the sealed bytes and their
// decryption together (E1). So the one buffer it was made of (the chunks were opened into it)
// answers its first read (`arrayBuffer`, `bytes`, `text`: what `getAttachmentBlob` callers and
// `get` use) without another copy: the Blob copied the bytes when it was made, so the caller
// may keep, change or transfer that buffer. After it the buffer is let go, and the platform
// answers as for any Blob. Everything else (`slice`, `stream`, object URLs, `fetch` bodies,
// IndexedDB) is the platform's from the start: the contents are the same bytes.

const utf8 = new TextDecoder()

export class OpenedBlob extends Blob {
  #bytes: Uint8Array | undefined

  constructor(bytes: Uint8Array, type = '') {
    super([bytes as Uint8Array<ArrayBuffer>], { type })
    this.#bytes = bytes
  }

  /** The bytes in a buffer of their own (handed over, not copied, when they fill it), once. */
  #take(): Uint8Array<ArrayBuffer> | undefined {
    const bytes = this.#bytes
    if (!bytes) return undefined
    this.#bytes = undefined
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    return (own ? bytes : bytes.slice()) as Uint8Array<ArrayBuffer>
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#take()?.buffer ?? super.arrayBuffer()
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#take() ?? new Uint8Array(await super.arrayBuffer())
  }

  override async text(): Promise<string> {
    const taken = this.#take()
    return taken ? utf8.decode(taken) : super.text()
  }
}
