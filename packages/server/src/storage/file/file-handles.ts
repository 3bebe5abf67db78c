import { open, type FileHandle } from 'node:fs/promises'

/**
 * Append handles kept open between commits (least recently used closed past `max`): opening and
 * closing a file per commit costs as much as the write itself. A file that is renamed, cut back
 * or removed must be `drop`ped first, so no handle outlives its path.
 */
export class AppendHandles {
  private readonly open = new Map<string, Promise<FileHandle>>()

  constructor(private readonly max = 256) {}

  get(path: string): Promise<FileHandle> {
    let h = this.open.get(path)
    if (h) {
      this.open.delete(path)
      this.open.set(path, h)
      return h
    }
    h = open(path, 'a')
    this.open.set(path, h)
    h.catch(() => this.open.get(path) === h && this.open.delete(path))
    if (this.open.size > this.max) {
      const [oldest, handle] = this.open.entries().next().value!
      this.open.delete(oldest)
      void handle.then(
        (fh) => fh.close(),
        () => {},
      )
    }
    return h
  }

  async drop(path: string): Promise<void> {
    const h = this.open.get(path)
    if (!h) return
    this.open.delete(path)
    await h.then(
      (fh) => fh.close(),
      () => {},
    )
  }

  async closeAll(): Promise<void> {
    const all = [...this.open.values()]
    this.open.clear()
    await Promise.all(
      all.map((h) =>
        h.then(
          (fh) => fh.close(),
          () => {},
        ),
      ),
    )
  }
}
