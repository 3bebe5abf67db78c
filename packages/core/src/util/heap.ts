/** A binary heap: `before(a, b) < 0` when `a` belongs nearer the top. For keeping the best k of many in O(n log k). */
export class Heap<T> {
  private readonly items: T[] = []

  constructor(private readonly before: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length
  }

  peek(): T | undefined {
    return this.items[0]
  }

  push(item: T): void {
    const h = this.items
    h.push(item)
    for (let i = h.length - 1; i > 0;) {
      const p = (i - 1) >> 1
      if (this.before(h[i]!, h[p]!) >= 0) break
      ;[h[i], h[p]] = [h[p]!, h[i]!]
      i = p
    }
  }

  /** Replaces the top with `item` (the heap keeps its size). */
  replaceTop(item: T): void {
    const h = this.items
    h[0] = item
    for (let i = 0; ;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < h.length && this.before(h[l]!, h[m]!) < 0) m = l
      if (r < h.length && this.before(h[r]!, h[m]!) < 0) m = r
      if (m === i) break
      ;[h[i], h[m]] = [h[m]!, h[i]!]
      i = m
    }
  }

  /** Every item, in no particular order; the heap is left empty. */
  drain(): T[] {
    return this.items.splice(0)
  }
}
