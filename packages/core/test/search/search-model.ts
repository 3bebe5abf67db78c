// The search index against a brute-force scan of the store: random writes (appends on any
// branch, updates, deletes, forks, branch switches, titles), some made by a second store on the
// same storage (another tab), then every word of the vocabulary searched both ways.
import fc from 'fast-check'
import { expect } from 'vitest'
import type { SessionEntry, Store } from '../../src/index.js'
import { hostOf } from '../../src/host.js'
import { entryText } from '../../src/search/doc-text.js'
import { fold, tokenize } from '../../src/search/tokenize.js'
import type { Search } from '../../src/search/index.js'

/** Words from several scripts, folded and not: each is searched for after every run. */
export const VOCABULARY = [
  'alpha',
  'Beta',
  'gamma',
  'Café',
  'cafe',
  'naïve',
  'ÉCOLE',
  '東京',
  '京都',
  'ソフト',
  '한국어',
  'مرحبا',
  'שלום',
  '🚀',
  'postgres',
  'cursor',
  'straße',
]
/** What each vocabulary word is searched as (folded; a CJK word's first pair). */
export const QUERIES = [...new Set(VOCABULARY.map((w) => tokenize(w)[0].term))]

export type Op =
  | { op: 'create'; title: number }
  | {
      op: 'append'
      s: number
      parent: number | null
      words: number[]
      role: 'user' | 'assistant'
      tab: number
    }
  | { op: 'update'; s: number; e: number; words: number[]; tab: number }
  | { op: 'delete'; s: number; tab: number }
  | { op: 'fork'; s: number; e: number }
  | { op: 'leaf'; s: number; e: number }
  | { op: 'title'; s: number; title: number }
  | { op: 'settle' }

const words = fc.array(fc.nat(VOCABULARY.length - 1), { minLength: 1, maxLength: 5 })
const tab = fc.nat(1)
export const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ op: fc.constant('create' as const), title: fc.nat(VOCABULARY.length - 1) }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('append' as const),
      s: fc.nat(),
      parent: fc.option(fc.nat()),
      words,
      role: fc.constantFrom('user' as const, 'assistant' as const),
      tab,
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({ op: fc.constant('update' as const), s: fc.nat(), e: fc.nat(), words, tab }),
    weight: 3,
  },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), s: fc.nat(), tab }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('fork' as const), s: fc.nat(), e: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('leaf' as const), s: fc.nat(), e: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('title' as const),
      s: fc.nat(),
      title: fc.nat(VOCABULARY.length - 1),
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ op: 'settle' as const }), weight: 5 },
)

const textOf = (ws: number[]): string => ws.map((w) => VOCABULARY[w]).join(' ')
const message = (role: 'user' | 'assistant', text: string) =>
  role === 'user'
    ? { role, content: [{ type: 'text' as const, text }], timestamp: 1 }
    : {
        role,
        content: [{ type: 'text' as const, text }],
        timestamp: 2,
        stop_reason: 'end' as const,
        model: 'm',
        provider: 'p',
      }

const sessionsOf = (store: Store): string[] => [...hostOf(store).heads()].map((h) => h.meta.session_id).sort()

async function entriesOf(store: Store, sid: string): Promise<SessionEntry[]> {
  await hostOf(store).load(sid)
  return [...(hostOf(store).entries(sid)?.values() ?? [])]
}

/**
 * Runs one op on `stores[tab]` (ops that pick by index wrap around what exists). A tab may not
 * have heard yet of a session the other deleted: the store refuses such a write, as it should.
 */
export async function apply(stores: readonly Store[], op: Op, search: Search): Promise<void> {
  try {
    await applyOne(stores, op, search)
  } catch (err) {
    const code = (err as { code?: string }).code
    if (stores.length < 2 || (code !== 'session/not_found' && code !== 'session/entry_not_found')) throw err
  }
}

async function applyOne(stores: readonly Store[], op: Op, search: Search): Promise<void> {
  const store = stores['tab' in op ? op.tab % stores.length : 0]
  if (op.op === 'settle') return search.flush()
  if (op.op === 'create') return void (await store.create({ title: VOCABULARY[op.title] }))
  const sessions = sessionsOf(store)
  if (!sessions.length) return
  const sid = sessions[op.s % sessions.length]
  if (op.op === 'delete') return void (await store.delete({ session_id: sid }))
  if (op.op === 'title') return void (await store.setMeta({ session_id: sid, title: VOCABULARY[op.title] }))
  const entries = (await entriesOf(store, sid)).filter((e) => e.kind === 'message')
  if (op.op === 'append') {
    const parent = op.parent === null || !entries.length ? undefined : entries[op.parent % entries.length].id
    await store.append({ session_id: sid, parent_id: parent, message: message(op.role, textOf(op.words)) })
    return
  }
  if (!entries.length) return
  const e = entries[op.e % entries.length]
  if (op.op === 'update')
    await store.updateMessage({
      session_id: sid,
      entry_id: e.id,
      content: [{ type: 'text', text: textOf(op.words) }],
    })
  else if (op.op === 'fork') await store.fork({ session_id: sid, entry_id: e.id })
  else await store.setActiveLeaf({ session_id: sid, entry_id: e.id })
}

/** Every (session, entry, on active path) holding `term`, by reading every entry of the store. */
export async function bruteForce(store: Store, term: string, activeOnly: boolean): Promise<string[]> {
  const host = hostOf(store)
  const out: string[] = []
  for (const sid of sessionsOf(store)) {
    const entries = await entriesOf(store, sid)
    const head = host.head(sid)!
    const byId = new Map(entries.map((e) => [e.id, e]))
    const path = new Set<string>()
    for (let id = head.leaf; id !== null; id = byId.get(id)?.parent_id ?? null) path.add(id)
    if (tokenize(head.meta.title).some((t) => t.term === term)) out.push(`${sid} title true`)
    for (const e of entries) {
      const text = entryText(e, { thinking: false })
      if (text === null || !tokenize(text).some((t) => t.term === term)) continue
      if (activeOnly && !path.has(e.id)) continue
      out.push(`${sid} ${e.id} ${path.has(e.id)}`)
    }
  }
  return out.sort()
}

/** Checks the index against the scan for every word of the vocabulary, with and without the path filter. */
export async function expectIndexEqualsScan(store: Store, search: Search): Promise<void> {
  for (const term of QUERIES) {
    for (const active_path_only of [false, true]) {
      const { hits, incomplete } = await search.query({
        query: term,
        prefix: false,
        limit: 100,
        active_path_only,
      })
      expect(incomplete).toBe(false)
      const found = hits.map((h) => `${h.session_id} ${h.entry_id ?? 'title'} ${h.on_active_path}`).sort()
      expect(found, `"${term}"${active_path_only ? ' on the active path' : ''}`).toEqual(
        await bruteForce(store, term, active_path_only),
      )
    }
  }
}

export { fold }
