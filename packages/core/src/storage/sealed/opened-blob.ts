// An opened attachment as the Blob a read returns. Making a Blob hands its bytes to the
// browser, and reading one back fetches them again (in Chromium, from another process): for an
// attachment just opened, that round trip cost more than the read of the sealed bytes and their
// decryption together (E1). So the bytes it was made of answer its first read in full
// (`arrayBuffer`, `bytes`, `text`: what `getAttachmentBlob` callers and `get` use); after it
// they are let go, and the platform answers as for any Blob. Everything else (`slice`,
// `stream`, object URLs, `fetch` bodies, IndexedDB) is the platform's from the start: the
// contents are the same bytes.

const utf8 = new TextDecoder()

export class OpenedBlob extends Blob {
  #pieces: readonly Uint8Array[] | undefined

  constructor(pieces: readonly Uint8Array[], type = '') {
    super(pieces as Uint8Array<ArrayBuffer>[], { type })
    this.#pieces = pieces
  }

  /** A fresh copy of the bytes (a caller may keep or transfer it), once; then the platform's. */
  #take(): Uint8Array<ArrayBuffer> | undefined {
    const pieces = this.#pieces
    if (!pieces) return undefined
    this.#pieces = undefined
    const out = new Uint8Array(this.size)
    let at = 0
    for (const p of pieces) {
      out.set(p, at)
      at += p.length
    }
    return out
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
