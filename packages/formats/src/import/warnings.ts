/** Something in the input that could not be mapped as-is; the importer says what it did instead. */
export interface ImportWarning {
  /** Stable kind, e.g. `missing-parent`, `unpaired-call`: tests and UIs switch on it. */
  code: string
  message: string
  /** The Colloquy session it concerns, when there is one. */
  session_id?: string
  /** 1-based line of the input (JSONL formats) or file path (archives, directories). */
  line?: number
  file?: string
}

/** Per code, only this many warnings are kept one by one; the rest are counted in a summary. */
const KEEP_PER_CODE = 50

/**
 * Collects warnings without letting a pathological file (100,000 broken lines) grow memory:
 * past `KEEP_PER_CODE` of one code, further ones only bump a counter that `list()` reports.
 */
export class Warnings {
  private readonly kept: ImportWarning[] = []
  private readonly counts = new Map<string, number>()

  add(code: string, message: string, where: Omit<ImportWarning, 'code' | 'message'> = {}): void {
    const n = (this.counts.get(code) ?? 0) + 1
    this.counts.set(code, n)
    if (n <= KEEP_PER_CODE) this.kept.push({ code, message, ...where })
  }

  list(): ImportWarning[] {
    const out = [...this.kept]
    for (const [code, n] of this.counts) {
      if (n > KEEP_PER_CODE)
        out.push({ code, message: `${n - KEEP_PER_CODE} more ${code} warnings not listed` })
    }
    return out
  }
}

/** What an importer left out on purpose (bookkeeping lines, duplicates), by kind: never silent. */
export class Skipped {
  readonly counts: Record<string, number> = {}
  add(kind: string, n = 1): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + n
  }
}
