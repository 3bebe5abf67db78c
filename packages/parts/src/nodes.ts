import type {
  ContentBlock,
  FunctionResultMessage,
  Json,
  JsonObject,
  SessionEntry,
  SessionTree,
} from '@colloquy/core'
import {
  blocksToParts,
  contentOfOutput,
  isKeptAside,
  outputOf,
  partsToBlocks,
  type NeutralPart,
  type ToolPart,
} from './parts.js'

/**
 * The custom entry that keeps what a framework message holds and Colloquy has no block for
 * (`data-*` and source parts, a URL file, the message's metadata). It is a child of the message
 * (after its result entries), hidden from transcripts like every custom entry.
 */
export const SIDECAR = 'colloquy.ui_parts'

export interface SidecarData {
  /** Parts kept aside, with their position in the message's part list. */
  parts: { index: number; part: NeutralPart }[]
  metadata?: Json
}

/**
 * One message as a chat framework shows it: a user, assistant or custom-role message entry (the
 * head) with the `function_result` entries that answer its calls and its sidecar folded in.
 */
export interface ChatNode {
  /** The head entry's id: the framework message's id. */
  readonly id: string
  /** The node this one follows (hidden custom entries in between are skipped); null at the top. */
  readonly parentId: string | null
  readonly role: 'user' | 'assistant' | 'system'
  readonly parts: readonly NeutralPart[]
  /** The framework message's metadata, when a sidecar keeps one. */
  readonly metadata?: Json
  /** Head first, then the folded entries in chain order. */
  readonly entries: readonly SessionEntry[]
  /** The last folded entry: where the next message attaches. */
  readonly tail: string
}

/** A session's tree as framework messages. */
export interface ChatTree {
  /** Every node, parents before children. */
  readonly nodes: readonly ChatNode[]
  readonly byId: ReadonlyMap<string, ChatNode>
  /** The node of the active leaf (null when the active leaf is hidden, e.g. a new chat's root). */
  readonly headId: string | null
  /** The active path, oldest first. */
  readonly path: readonly ChatNode[]
  /** The entry new messages attach to when the path is empty (the hidden root), else the head's tail. */
  readonly appendParent: string | null
}

const roleOf = (e: SessionEntry): ChatNode['role'] | null =>
  e.kind !== 'message'
    ? null
    : e.message.role === 'user'
      ? 'user'
      : e.message.role === 'custom'
        ? 'system'
        : 'assistant'

interface Draft {
  head: SessionEntry
  parentId: string | null
  entries: SessionEntry[]
  tail: string
  open: Set<string>
}

/** Calls in an assistant message still waiting for a result entry. */
function openCalls(e: SessionEntry): Set<string> {
  const open = new Set<string>()
  if (e.kind !== 'message' || e.message.role !== 'assistant') return open
  const c = e.message.content
  c.forEach((b, i) => {
    const next = c[i + 1]
    if (b.type === 'function_call' && !(next?.type === 'function_result' && next.function_call_id === b.id))
      open.add(b.id)
  })
  return open
}

function foldsInto(d: Draft, e: SessionEntry): boolean {
  if (d.tail !== e.parent_id) return false
  if (e.kind === 'custom') return e.custom_type === SIDECAR && d.entries.every((x) => x.kind !== 'custom')
  return (
    e.message.role === 'function_result' &&
    d.open.has(e.message.function_call_id) &&
    d.entries.every((x) => x.kind !== 'custom')
  )
}

/** The parts of a head with its folded entries. */
export function partsOf(entries: readonly SessionEntry[]): { parts: NeutralPart[]; metadata?: Json } {
  const [head, ...rest] = entries
  let parts: NeutralPart[]
  if (head.kind !== 'message') parts = []
  else if (head.message.role === 'function_result') {
    const m = head.message
    parts = [
      {
        type: 'tool',
        toolCallId: m.function_call_id,
        toolName: m.function_id,
        input: null,
        result: { output: outputOf(m.content), isError: m.is_error },
        resultEntryId: head.id,
        hasCall: false,
      },
    ]
  } else parts = blocksToParts(head.message.content)
  let metadata: Json | undefined
  for (const e of rest) {
    if (e.kind === 'message' && e.message.role === 'function_result') {
      const m = e.message
      const i = parts.findIndex((p) => p.type === 'tool' && p.toolCallId === m.function_call_id && !p.result)
      if (i >= 0)
        parts[i] = {
          ...(parts[i] as ToolPart),
          result: { output: outputOf(m.content), isError: m.is_error },
          resultEntryId: e.id,
        }
    } else if (e.kind === 'custom') {
      const data = e.data as unknown as SidecarData
      for (const { index, part } of [...(data.parts ?? [])].sort((a, b) => a.index - b.index))
        parts.splice(index, 0, part)
      if (data.metadata !== undefined) metadata = data.metadata
    }
  }
  return metadata === undefined ? { parts } : { parts, metadata }
}

/** What of `parts` goes into the head's content, and what into the sidecar. */
export function splitParts(
  parts: readonly NeutralPart[],
  metadata?: Json,
): { content: ContentBlock[]; sidecar: SidecarData | null } {
  const aside: SidecarData['parts'] = []
  const kept: NeutralPart[] = []
  parts.forEach((part, index) => (isKeptAside(part) ? aside.push({ index, part }) : kept.push(part)))
  const sidecar =
    aside.length > 0 || metadata !== undefined
      ? { parts: aside, ...(metadata !== undefined && { metadata }) }
      : null
  return { content: partsToBlocks(kept), sidecar }
}

/**
 * The entries a node stands for, with `parts` (and `metadata`) as the framework has them now: the
 * inverse of folding. Fields a framework message has no place for (model, timestamps, result
 * entries' ids and details) come from the node's own entries.
 */
export function entriesOf(
  node: Pick<ChatNode, 'entries'>,
  parts: readonly NeutralPart[],
  metadata?: Json,
): SessionEntry[] {
  const [head, ...rest] = node.entries
  const { content, sidecar } = splitParts(parts, metadata)
  const results = new Map(
    parts.flatMap((p) =>
      p.type === 'tool' && p.resultEntryId !== undefined && p.result
        ? [[p.resultEntryId, p.result] as const]
        : [],
    ),
  )
  const answer = (e: SessionEntry & { kind: 'message' }, m: FunctionResultMessage): SessionEntry => {
    const r = results.get(e.id)
    return r ? { ...e, message: { ...m, content: contentOfOutput(r.output), is_error: r.isError } } : e
  }
  const out: SessionEntry[] = []
  if (head.kind === 'message' && head.message.role === 'function_result') out.push(answer(head, head.message))
  else if (head.kind === 'message') out.push({ ...head, message: { ...head.message, content } })
  else out.push(head)
  for (const e of rest) {
    if (e.kind === 'message' && e.message.role === 'function_result') out.push(answer(e, e.message))
    else if (e.kind === 'custom')
      out.push({ ...e, data: (sidecar ?? { parts: [] }) as unknown as JsonObject })
    else out.push(e)
  }
  return out
}

const sameEntries = (a: readonly SessionEntry[], b: readonly SessionEntry[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i])

/**
 * Folds a session's tree into framework messages. Pass the same `cache` on every call: a node
 * whose entries did not change keeps its identity, which both frameworks rely on to skip work.
 */
export function foldTree(tree: SessionTree, cache: Map<string, ChatNode> = new Map()): ChatTree {
  const drafts: Draft[] = []
  const owner = new Map<string, Draft | null>()
  const stack: { id: string; current: Draft | null }[] = [...(tree.children.get(null) ?? [])]
    .reverse()
    .map((id) => ({ id, current: null }))
  while (stack.length > 0) {
    const { id, current } = stack.pop()!
    const e = tree.entries.get(id)
    if (!e) continue
    let own: Draft | null
    if (current && foldsInto(current, e)) {
      current.entries.push(e)
      current.tail = e.id
      if (e.kind === 'message' && e.message.role === 'function_result')
        current.open.delete(e.message.function_call_id)
      own = current
    } else if (roleOf(e) === null)
      own = current // a hidden custom entry: what follows continues the same node chain
    else {
      own = { head: e, parentId: current?.head.id ?? null, entries: [e], tail: e.id, open: openCalls(e) }
      drafts.push(own)
    }
    owner.set(id, own)
    const kids = tree.children.get(id)
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push({ id: kids[i], current: own })
  }
  const nodes: ChatNode[] = []
  const byId = new Map<string, ChatNode>()
  for (const d of drafts) {
    const old = cache.get(d.head.id)
    let node: ChatNode
    if (old && old.parentId === d.parentId && sameEntries(old.entries, d.entries)) node = old
    else {
      const { parts, metadata } = partsOf(d.entries)
      node = Object.freeze({
        id: d.head.id,
        parentId: d.parentId,
        role: roleOf(d.head)!,
        parts,
        ...(metadata !== undefined && { metadata }),
        entries: d.entries,
        tail: d.tail,
      })
    }
    nodes.push(node)
    byId.set(node.id, node)
  }
  cache.clear()
  for (const n of nodes) cache.set(n.id, n)
  const leaf = tree.active_leaf
  const headId = leaf === null ? null : (owner.get(leaf)?.head.id ?? null)
  const path: ChatNode[] = []
  for (
    let n = headId === null ? undefined : byId.get(headId);
    n;
    n = n.parentId === null ? undefined : byId.get(n.parentId)
  )
    path.push(n)
  path.reverse()
  const last = path.at(-1)
  // A leaf inside the last node (its head or a folded result) continues after the whole node; a
  // hidden entry below it (or a new chat's root) is where the next message goes.
  const inNode = last !== undefined && last.entries.some((e) => e.id === leaf)
  return { nodes, byId, headId, path, appendParent: inNode ? last.tail : leaf }
}
