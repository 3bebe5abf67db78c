export type IdKind = 'session' | 'entry' | 'attachment'

/** What operations need from outside: the clock, id allocation and the list limits. */
export interface OpContext {
  now(): number
  newId(kind: IdKind): string
  readonly limits: {
    readonly default_list_limit: number
    readonly max_list_limit: number
    readonly max_attachment_bytes: number
  }
}

/** The contract's clamp: default when absent, then into [1, max] (`0` becomes 1). */
export function clampLimit(ctx: OpContext, limit: number | null | undefined): number {
  return Math.min(Math.max(limit ?? ctx.limits.default_list_limit, 1), ctx.limits.max_list_limit)
}
