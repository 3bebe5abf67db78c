import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { ContentBlock, MessageEntry, SessionEntry, SessionImport } from '@colloquy/core'
import type { ImportResult } from '../src/index.js'

// The shared samples sit beside the repository (CI clones it with shared/ next to it).
export const SAMPLES = new URL('../../../../shared/samples/', import.meta.url)
export const sample = (rel: string): Uint8Array =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(rel, SAMPLES))))
export const sampleText = (rel: string): string => readFileSync(fileURLToPath(new URL(rel, SAMPLES)), 'utf8')
export const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url))))
export const fixtureText = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url)), 'utf8')

export const byId = (s: SessionImport): Map<string, SessionEntry> => new Map(s.entries.map((e) => [e.id, e]))

/** Ids from the root to `leaf` (default: the active leaf). */
export function pathIds(s: SessionImport, leaf: string | null = s.active_leaf): string[] {
  const m = byId(s)
  const out: string[] = []
  for (let id = leaf; id !== null; id = m.get(id)!.parent_id) out.unshift(id)
  return out
}

export const messages = (s: SessionImport): MessageEntry[] =>
  s.entries.filter((e): e is MessageEntry => e.kind === 'message')
export const ofRole = (s: SessionImport, role: string): MessageEntry[] =>
  messages(s).filter((e) => e.message.role === role)
export const blocksOf = (s: SessionImport, type: ContentBlock['type']): ContentBlock[] =>
  messages(s)
    .flatMap((e) => e.message.content)
    .filter((b) => b.type === type)

export function childrenOf(s: SessionImport, id: string | null): string[] {
  return s.entries.filter((e) => e.parent_id === id).map((e) => e.id)
}

/**
 * Every function call and where its result is: a result counts only if it sits below the entry
 * holding its call (same branch). Returns the calls with no result in their branch.
 */
export function unansweredCalls(s: SessionImport): string[] {
  const m = byId(s)
  const answered = new Set<string>()
  for (const e of messages(s)) {
    if (e.message.role !== 'function_result') continue
    const call = e.message.function_call_id
    for (let id = e.parent_id; id !== null; id = m.get(id)!.parent_id) {
      const a = m.get(id)!
      if (
        a.kind === 'message' &&
        a.message.content.some((b) => b.type === 'function_call' && b.id === call)
      ) {
        answered.add(call)
        break
      }
    }
  }
  const calls = messages(s)
    .flatMap((e) => e.message.content)
    .filter((b) => b.type === 'function_call')
    .map((b) => (b as { id: string }).id)
  return calls.filter((c) => !answered.has(c))
}

/** Results whose call is not above them in their branch. */
export function misplacedResults(s: SessionImport): string[] {
  const m = byId(s)
  return ofRole(s, 'function_result')
    .filter((e) => {
      const call = (e.message as { function_call_id: string }).function_call_id
      for (let id = e.parent_id; id !== null; id = m.get(id)!.parent_id) {
        const a = m.get(id)!
        if (
          a.kind === 'message' &&
          a.message.content.some((b) => b.type === 'function_call' && b.id === call)
        )
          return false
      }
      return true
    })
    .map((e) => e.id)
}

export const codes = (r: ImportResult): string[] => r.warnings.map((w) => w.code).sort()
