import type { SessionEntry, SessionHead, SessionMeta } from '@colloquy/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { commitLines, parseFile, replay } from '../src/storage/file/jsonl.js'

// A session file's `meta` and `append` records hold only what changed of the meta since the
// record before them. Whatever the metas a session goes through (fields added, changed, removed,
// nested metadata, a large field left as it was), reading the file back gives every meta whole,
// in order: the same JSON as the head each commit wrote, and the head's `v`.

const entry = (id: string, parent: string | null): SessionEntry => ({
  id,
  parent_id: parent,
  timestamp: 1,
  revision: 0,
  kind: 'message',
  message: { role: 'user', content: [{ type: 'text', text: id }], timestamp: 1 },
})

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 4 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 3 }), tie('value'), { maxKeys: 3 }),
  ),
})).value

/** A meta of session `s`: optional fields come and go, values change or stay. */
const meta = fc.record(
  {
    session_id: fc.constant('s'),
    title: fc.constantFrom('', 'a', 'a title'),
    // A large field (as a sealed meta's boxes) that most commits leave as it was.
    description: fc.constantFrom('d'.repeat(600), 'e'.repeat(600)),
    status: fc.constantFrom('idle' as const, 'working' as const, 'done' as const, 'error' as const),
    status_reason: fc.constantFrom('why', 'because'),
    kind: fc.constantFrom('user' as const, 'automation' as const),
    metadata: fc.record(
      {
        owner: fc.constantFrom('alice', 'bob'),
        // `__proto__` parsed from JSON is a plain key: it must come back as one.
        other: fc.dictionary(fc.constantFrom('k', 'l', '__proto__'), json, { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
    forked_from: fc.constantFrom('f1', 'f2'),
    draft: fc.string({ maxLength: 3 }),
    created_at: fc.constant(5),
    updated_at: fc.integer({ min: 5, max: 100_000 }),
    message_count: fc.nat(1000),
  },
  {
    requiredKeys: [
      'session_id',
      'title',
      'description',
      'status',
      'kind',
      'metadata',
      'created_at',
      'updated_at',
      'message_count',
    ],
  },
) as fc.Arbitrary<SessionMeta>

const norm = (m: SessionMeta | undefined): unknown => (m === undefined ? m : JSON.parse(JSON.stringify(m)))

describe('session file records: meta patches', () => {
  it('property: a file of commits reads back every meta whole, after each commit, from records that repeat no unchanged field of it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ meta, append: fc.boolean(), same: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (commits) => {
          let prev: SessionHead | undefined
          let text = ''
          for (const [i, c] of commits.entries()) {
            // `same`: a new meta object of equal JSON (as a head read again from disk).
            const m = c.same && prev ? (JSON.parse(JSON.stringify(prev.meta)) as SessionMeta) : c.meta
            const id = `e${i}`
            const head: SessionHead = { meta: m, leaf: c.append ? id : (prev?.leaf ?? null), v: i + 1 }
            const lines = commitLines(prev, head, c.append ? [entry(id, prev?.leaf ?? null)] : [], i + 1)
            // A field left as it was is not written again.
            if (prev && prev.meta.description === m.description) expect(lines).not.toContain(m.description)
            if (prev && c.same) expect(lines).not.toMatch(/"(meta|set|unset)"/)
            text += lines
            prev = head
            const parsed = await parseFile(Buffer.from(text))
            expect(parsed.skipped).toBe(0)
            const replayed = replay(parsed.lines.map((l) => l.record))
            expect(norm(replayed.meta)).toStrictEqual(norm(m))
            // And the head's version as committed.
            expect(replayed.v).toBe(head.v)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
