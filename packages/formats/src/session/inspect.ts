import type { SessionEntry, SessionImport, Usage } from '@colloquy/core'
import { childrenOf, pathTo } from './tree.js'

/** What `colloquy-formats inspect` prints per session, and what tests assert on. */
export interface SessionSummary {
  session_id: string
  title: string
  entries: number
  messages: number
  /** Entries per role (`custom` entries counted as `custom:<type>`). */
  by_role: Record<string, number>
  /** Leaves of the tree: how many distinct branches a picker can show. */
  branches: number
  /**
   * Places (an entry, or the root level) with two or more children that each lead to a
   * message: the forks a user made. Side leaves of bookkeeping entries are not forks.
   */
  forks: number
  active_path: number
  models: string[]
  usage: Usage
}

export function summarize(session: SessionImport): SessionSummary {
  const { entries } = session
  const byId = new Map(entries.map((e) => [e.id, e]))
  const children = childrenOf(entries)
  const by_role: Record<string, number> = {}
  const models = new Set<string>()
  const usage: Required<Omit<Usage, 'cost_usd'>> & { cost_usd?: number } = {
    input: 0,
    output: 0,
    cache_read: 0,
    cache_write: 0,
    reasoning: 0,
  }
  for (const e of entries) {
    const role = e.kind === 'message' ? e.message.role : `custom:${e.custom_type}`
    by_role[role] = (by_role[role] ?? 0) + 1
    if (e.kind !== 'message' || e.message.role !== 'assistant') continue
    models.add(e.message.model)
    const u = e.message.usage
    if (!u) continue
    for (const k of ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const)
      usage[k] += u[k] ?? 0
    if (u.cost_usd !== undefined) usage.cost_usd = (usage.cost_usd ?? 0) + u.cost_usd
  }
  // Whether a subtree holds a message, computed children-first without recursion.
  const hasMessage = new Map<string, boolean>()
  const order = topological(entries, children)
  for (let i = order.length - 1; i >= 0; i--) {
    const e = order[i]
    hasMessage.set(e.id, e.kind === 'message' || (children.get(e.id) ?? []).some((c) => hasMessage.get(c)))
  }
  let forks = 0
  let branches = 0
  for (const kids of children.values()) if (kids.filter((k) => hasMessage.get(k)).length >= 2) forks++
  for (const e of entries) if (!children.has(e.id)) branches++
  return {
    session_id: session.meta.session_id,
    title: session.meta.title,
    entries: entries.length,
    messages: entries.filter((e) => e.kind === 'message').length,
    by_role,
    branches,
    forks,
    active_path: pathTo(byId, session.active_leaf).length,
    models: [...models],
    usage,
  }
}

/** Entries with every parent before its children (roots first, siblings in entry order). */
export function topological(
  entries: readonly SessionEntry[],
  children = childrenOf(entries),
): SessionEntry[] {
  const byId = new Map(entries.map((e) => [e.id, e]))
  const out: SessionEntry[] = []
  const seen = new Set<string>()
  const stack = [...(children.get(null) ?? [])].reverse()
  while (stack.length) {
    const id = stack.pop()!
    // A duplicate id would make a cycle; corrupt input must not hang an export.
    if (seen.has(id)) continue
    seen.add(id)
    out.push(byId.get(id)!)
    const kids = children.get(id)
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i])
  }
  return out
}
