// What one tab posts to the others for a commit, and the shape checks of what arrives.
import type { ChangePayload, Commit } from '../engine/changes.js'
import type { EventEnvelope } from '../model/model.js'

export interface RelayMessage {
  readonly payload: ChangePayload
  readonly events: readonly EventEnvelope[]
}

/** The writes behind a commit's changes, minus what was merely re-read from disk. */
export function payloadOf(commit: Commit): ChangePayload {
  const deleted: string[] = []
  const heads: ChangePayload['heads'][number][] = []
  const entries: Array<readonly [string, ChangePayload['entries'][number][1]]> = []
  for (const c of commit.changes.values()) {
    if (c.reloaded) continue
    if (c.head === null) deleted.push(c.session_id)
    else if (c.head) heads.push(c.head)
    if (c.added.length || c.updated.length) entries.push([c.session_id, [...c.added, ...c.updated]])
  }
  return { deleted, heads, entries }
}

/** What is posted for a commit; undefined when it wrote nothing another tab needs. */
export function messageOf(commit: Commit): RelayMessage | undefined {
  const payload = payloadOf(commit)
  if (!payload.deleted.length && !payload.heads.length && !payload.entries.length && !commit.events.length)
    return undefined
  return { payload, events: commit.events }
}

/** Shapes of what other tabs post (presence here, commits in `relay-receive.ts`). */
type Loose = Record<string, unknown>
export const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null
export const isString = (v: unknown): v is string => typeof v === 'string'
export const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
