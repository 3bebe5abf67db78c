import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SessionMeta } from '../src/index.js'
import { MENTION_WORK_BUDGET, mentionQueryTooCostly, searchMentions, WorkMeter } from '../src/wire.js'

// The mention search's work budget: counted, never timed. A meter with an unbounded budget says
// what a search would cost; the default one must never spend more than MENTION_WORK_BUDGET.

const meta = (i: number, title: string, extra: Partial<SessionMeta> = {}): SessionMeta =>
  ({
    session_id: `s_${String(i).padStart(6, '0')}`,
    title,
    description: '',
    status: 'idle',
    kind: 'user',
    metadata: {},
    message_count: 0,
    created_at: i,
    updated_at: i,
    ...extra,
  }) as SessionMeta

const unbounded = (): WorkMeter => new WorkMeter(Number.MAX_SAFE_INTEGER)

/** The contract's ranking written plainly (contract 7 item 14): the oracle for exactness. */
function contractSearch(metas: readonly SessionMeta[], query: string, limit = 50): string[] {
  const q = query.trim().toLowerCase()
  const tier = (m: SessionMeta): number | undefined => {
    if (q === '') return 0
    const id = m.session_id.toLowerCase()
    const title = m.title.trim().toLowerCase()
    if (id === q || title === q || title.startsWith(q)) return 0
    if (new TextEncoder().encode(q).length >= 4 && id.startsWith(q)) return 1
    const words = title.split(/[^\p{L}\p{N}]+/u).filter(Boolean)
    const terms = q.split(/\s+/).filter(Boolean)
    if (terms.length && terms.every((t) => words.some((w) => w.startsWith(t)))) return 1
    if (title.includes(q)) return 2
    if (m.description.toLowerCase().includes(q)) return 3
    return undefined
  }
  return metas
    .map((m) => ({ m, t: tier(m) }))
    .filter((r): r is { m: SessionMeta; t: number } => r.t !== undefined)
    .sort(
      (a, b) => a.t - b.t || b.m.updated_at - a.m.updated_at || (a.m.session_id < b.m.session_id ? -1 : 1),
    )
    .slice(0, limit)
    .map((r) => r.m.session_id)
}

describe('mention search work budget', () => {
  const words = Array.from({ length: 50_000 }, (_, i) => `w${i}`)
  const longTitle = words.join(' ')

  it('a 50,000-term query over a 50,000-word title stays within the budget and says it is incomplete', () => {
    const sessions = [meta(1, longTitle)]
    const query = words.slice().reverse().join(' ')
    // What the search costs when nothing stops it: far past the budget (so the budget is what bounds it).
    const free = unbounded()
    expect(searchMentions(sessions, { query }, free).items.map((i) => i.id)).toStrictEqual(['s_000001'])
    expect(free.spent).toBeGreaterThan(20 * MENTION_WORK_BUDGET)
    const meter = new WorkMeter(MENTION_WORK_BUDGET)
    expect(searchMentions(sessions, { query }, meter)).toStrictEqual({ items: [], incomplete: true })
    expect(meter.spent).toBeLessThanOrEqual(MENTION_WORK_BUDGET)
  })

  it('one session too long to search does not hide the others', () => {
    const sessions = [meta(1, 'x'.repeat(1_000_000)), meta(2, 'Deploy pipeline'), meta(3, 'Notes')]
    const meter = new WorkMeter(MENTION_WORK_BUDGET)
    expect(searchMentions(sessions, { query: 'deploy' }, meter)).toStrictEqual({
      items: [expect.objectContaining({ id: 's_000002', label: 'Deploy pipeline' })],
      incomplete: true,
    })
    expect(meter.spent).toBeLessThanOrEqual(MENTION_WORK_BUDGET)
  })

  it('many sessions: the scan stops at the budget with the best matches among those examined', () => {
    const sessions = Array.from({ length: 20_000 }, (_, i) =>
      meta(i, `Deploy pipeline number ${i} for production`),
    )
    const meter = new WorkMeter(MENTION_WORK_BUDGET)
    const res = searchMentions(sessions, { query: 'pipeline prod' }, meter)
    expect(res.incomplete).toBe(true)
    expect(res.items).toHaveLength(8)
    expect(meter.spent).toBeLessThanOrEqual(MENTION_WORK_BUDGET)
    // Normal sizes are answered whole: 1,000 such sessions fit.
    const some = sessions.slice(0, 1000)
    const whole = searchMentions(some, { query: 'pipeline prod' })
    expect(whole.incomplete).toBeUndefined()
    expect(whole.items.map((i) => i.id)).toStrictEqual(contractSearch(some, 'pipeline prod', 8))
  })

  it('hostile queries and titles of any size never spend more than the budget', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc
        .integer({ min: 1, max: 200_000 })
        .chain((n) => fc.constantFrom('a ', 'ab', 'é€😀 ', 'w1 ', ' ').map((u) => u.repeat(n))),
    )
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 5 }),
        text,
        fc.integer({ min: 1, max: 3000 }),
        (titles, query, copies) => {
          const sessions = Array.from({ length: copies }, (_, i) =>
            meta(i, titles[i % titles.length]!, { description: titles[(i + 1) % titles.length]! }),
          )
          const meter = new WorkMeter(MENTION_WORK_BUDGET)
          searchMentions(sessions, { query }, meter)
          expect(meter.spent).toBeLessThanOrEqual(MENTION_WORK_BUDGET)
        },
      ),
      { numRuns: 40 },
    )
  })

  it('within the budget the ranking is the contract ranking exactly (word prefixes, many terms, any script)', () => {
    const word = fc.constantFrom(
      'deploy',
      'Dep',
      'pipe',
      'line',
      'é',
      'été',
      'Ünï',
      '𝐀bc',
      '42',
      'x-y',
      'a.b',
      'naïve',
      'ÅSA',
      'z',
    )
    const phrase = fc
      .array(word, { maxLength: 8 })
      .chain((ws) => fc.constantFrom(' ', '-', '  ', '/', ', ').map((sep) => ws.join(sep)))
    // Up to 300 terms: many terms take the sorted-words path.
    const query = fc.oneof(
      phrase,
      fc.array(word, { minLength: 50, maxLength: 300 }).map((ws) => ws.join(' ')),
    )
    fc.assert(
      fc.property(fc.array(fc.tuple(phrase, phrase), { minLength: 1, maxLength: 12 }), query, (rows, q) => {
        const sessions = rows.map(([title, description], i) =>
          meta(i, title, { description, updated_at: i % 3 }),
        )
        const meter = unbounded()
        const res = searchMentions(sessions, { query: q, limit: 50 }, meter)
        expect(res.incomplete).toBeUndefined()
        expect(res.items.map((i) => i.id)).toStrictEqual(contractSearch(sessions, q))
      }),
      { numRuns: 300 },
    )
  })

  it('says a query is too costly exactly when a whole budget cannot prepare it (a server then reads no sessions)', () => {
    const sessions = [meta(1, 'w1 w2 w3'), meta(2, 'something else')]
    // Around the edge, in characters of the trimmed query, and with blanks around it.
    const edge = Math.floor(MENTION_WORK_BUDGET / 6)
    for (const n of [1, edge - 1, edge, edge + 1, 2 * edge]) {
      const query = `  ${'x'.repeat(n)} `
      const res = searchMentions(sessions, { query, limit: 50 })
      const refused =
        res.items.length === 0 && res.incomplete === true && searchMentions([], { query }).incomplete
      expect(mentionQueryTooCostly(query), `${n} characters`).toBe(Boolean(refused))
    }
    expect(mentionQueryTooCostly(undefined)).toBe(false)
    const worst = Array.from({ length: 50_000 }, (_, i) => `w${i}`).join(' ')
    expect(mentionQueryTooCostly(worst)).toBe(true)
    expect(searchMentions(sessions, { query: worst })).toEqual({ items: [], incomplete: true })
  })
})
