// A server whose store holds a bounded working set of session heads (a storage serving heads on
// demand, `--max-heads` small) answers every route for sessions it does not hold exactly as for
// those it does: lists, history, push, pull, tenancy, quotas and mentions. Shared by the memory
// PostgreSQL and file storage suites; the server runs as a process (the test launcher's `--test-working-set`
// route says what it holds).
import { createHash } from 'node:crypto'
import type { ReplicaChange, SessionMeta } from '@colloquy/core'
import { expect } from 'vitest'
import { sessionChanges } from '../support/sync-push.js'
import {
  failure,
  postJson,
  pullAll,
  pushChanges,
  rpc,
  startServer,
  user,
  type ServerProcess,
} from './helpers.js'

export const BOUND = 8
const TOKENS = ['alice=tok-alice', 'bob=tok-bob']

/** Sessions each principal starts with; Alice's quota is what she starts with. */
export interface Fill {
  alice: number
  bob: number
}

/** A server process over `storage` (its arguments) with a working set of `BOUND` heads. */
export function startWorkingSetServer(storage: readonly string[], fill: Fill): Promise<ServerProcess> {
  return startServer(
    [
      ...storage,
      '--test-working-set',
      ...TOKENS.flatMap((t) => ['--token', t]),
      '--max-heads',
      String(BOUND),
      '--max-sessions',
      String(fill.alice),
      '--requests-per-second',
      '0',
    ],
    60_000,
  )
}

const idOf = (who: string, i: number): string => `${who}-${String(i).padStart(5, '0')}`

/** Alice's and Bob's sessions, each with one message, pushed as their clients push them. */
export async function fillServer(url: string, fill: Fill): Promise<void> {
  for (const [who, n] of [
    ['alice', fill.alice],
    ['bob', fill.bob],
  ] as const) {
    const changes: unknown[] = []
    for (let i = 0; i < n; i++) {
      const session_id = idOf(who, i)
      changes.push(
        ...sessionChanges(session_id, `${who} chat ${i}`, 1_700_000_000_000 + i, 1, () =>
          user(`hello from ${session_id}`),
        ),
      )
    }
    for (let i = 0; i < changes.length; i += 1000) {
      const results = await pushChanges(
        url,
        changes.slice(i, i + 1000) as ReplicaChange[],
        `tok-${who}`,
        i + 1,
      )
      expect(results.every((r) => r.status === 'applied')).toBe(true)
    }
  }
}

export interface WorkingSet {
  allHeld: boolean
  held: number
  holds: Record<string, boolean>
  headRows: number
  /** On the file storage: session files read since the process started. */
  sessionFileReads: number
  /** Pages of heads the server's code read through its store since the process started. */
  pageReads: number
}

/** What the server's store holds now (the launcher's test route). */
export async function workingSet(url: string, ids: readonly string[] = []): Promise<WorkingSet> {
  const res = await fetch(`${url}/test/working-set?ids=${ids.join(',')}`, {
    headers: { authorization: 'Bearer tok-alice' },
  })
  if (!res.ok) throw await failure(res)
  return (await res.json()) as WorkingSet
}

const notHeld = async (url: string, ...ids: string[]): Promise<void> => {
  const { holds } = await workingSet(url, ids)
  for (const id of ids) expect(holds[id], `${id} is not held`).toBe(false)
}

/**
 * Every route over sessions the store does not hold. Call on a server freshly started over the
 * filled storage (nothing used yet), then it checks the working set stayed within its bound.
 */
export async function checkRoutes(url: string, fill: Fill): Promise<void> {
  expect((await workingSet(url)).allHeld).toBe(false)
  const alice = 'tok-alice'
  const bob = 'tok-bob'
  // A session far from anything used: not in memory.
  const cold = idOf('alice', Math.floor(fill.alice / 2))
  await notHeld(url, cold)

  // list: Alice's sessions only, every one of them once, in the contract's order, page by page.
  const listed: SessionMeta[] = []
  let cursor: string | undefined
  do {
    const page = await rpc<{ sessions: SessionMeta[]; next_cursor?: string }>(
      url,
      'session::list',
      { limit: 100, order: 'created_asc', ...(cursor && { cursor }) },
      alice,
    )
    listed.push(...page.sessions)
    cursor = page.next_cursor
  } while (cursor)
  // Created a millisecond apart, in id order.
  expect(listed.map((m) => m.session_id)).toEqual(
    Array.from({ length: fill.alice }, (_, i) => idOf('alice', i)),
  )
  expect(listed.every((m) => m.metadata?.owner === 'alice')).toBe(true)
  expect((await workingSet(url)).held).toBeLessThanOrEqual(BOUND)

  // get / history of a session not held: Alice's answer, Bob's not_found.
  await notHeld(url, cold)
  const history = await fetch(`${url}/sessions/${cold}/history`, {
    headers: { authorization: `Bearer ${alice}` },
  })
  expect(history.status).toBe(200)
  expect(await history.json()).toEqual([user(`hello from ${cold}`)])
  const other = idOf('alice', 1)
  await notHeld(url, other)
  expect(await rpc(url, 'session::get', { session_id: other }, bob)).toBeNull()
  const denied = await fetch(`${url}/sessions/${other}/history`, {
    headers: { authorization: `Bearer ${bob}` },
  })
  expect(denied.status).toBe(404)

  // push: Alice appends to a session not held; Bob's change to one of hers answers not_found.
  const target = idOf('alice', 2)
  const entry = {
    id: 'e-pushed',
    parent_id: 'e0',
    timestamp: 1_800_000_000_000,
    revision: 0,
    kind: 'message',
    message: user('pushed'),
  }
  const theirs = idOf('alice', 3)
  await notHeld(url, target, theirs)
  const [fromBob] = await pushChanges(
    url,
    [
      {
        type: 'entry',
        session_id: theirs,
        entry: { ...entry, id: 'e-bob' },
        base_revision: null,
      } as ReplicaChange,
    ],
    bob,
  )
  expect(fromBob).toMatchObject({ status: 'rejected', code: 'session/not_found' })
  const mine = await pushChanges(
    url,
    [
      { type: 'entry', session_id: target, entry, base_revision: null },
      { type: 'leaf', session_id: target, entry_id: 'e-pushed' },
    ] as ReplicaChange[],
    alice,
  )
  expect(mine).toMatchObject([{ status: 'applied' }, { status: 'applied' }])
  const messages = await rpc<{ messages: Array<{ entry_id: string }> }>(
    url,
    'session::messages',
    { session_id: target },
    alice,
  )
  expect(messages.messages.map((m) => m.entry_id)).toEqual(['e0', 'e-pushed'])
  expect((await rpc(url, 'session::messages', { session_id: theirs }, alice)).messages).toHaveLength(1)

  // pull from 0: every one of Alice's sessions with its meta and entries, none of Bob's.
  const { changes } = await pullAll(url, 0, 500, alice)
  const metas = new Set(changes.flatMap((c) => (c.change.type === 'meta' ? [c.change.meta.session_id] : [])))
  expect(metas.size).toBe(fill.alice)
  expect([...metas].every((id) => id.startsWith('alice-'))).toBe(true)
  const entries = changes.filter((c) => c.change.type === 'entry')
  expect(entries).toHaveLength(fill.alice + 1)
  const fromBobSide = await pullAll(url, 0, 500, bob)
  expect(
    new Set(fromBobSide.changes.flatMap((c) => (c.change.type === 'meta' ? [c.change.meta.session_id] : [])))
      .size,
  ).toBe(fill.bob)

  // quota: Alice holds her maximum; ensuring one she has (not held) is no new session, a new one is refused.
  const again = idOf('alice', 4)
  await notHeld(url, again)
  const ensured = await rpc<{ meta: SessionMeta }>(url, 'session::ensure', { session_id: again }, alice)
  expect(ensured.meta.title).toBe('alice chat 4')
  const refused = await postJson(`${url}/rpc/session::create`, { title: 'one too many' }, alice)
  expect(refused.status).toBe(403)
  expect((await failure(refused)).message).toMatch(/quota exceeded/)
  // Bob cannot take an id Alice holds (not held here) by ensuring it.
  const taken = idOf('alice', 5)
  await notHeld(url, taken)
  const stolen = await postJson(`${url}/rpc/session::ensure`, { session_id: taken }, bob)
  expect(stolen.status).toBe(404)

  // attachments: Alice uploads to a session not held, Bob cannot; Alice's `reuse=1` upload to
  // another of her sessions finds the bytes once that session left the working set, Bob's never.
  const bytes = 'the same bytes in two sessions'
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  const holder = idOf('alice', 6)
  const reuser = idOf('alice', 7)
  await notHeld(url, holder, reuser)
  const upload = (session_id: string, token: string): Promise<Response> =>
    fetch(`${url}/attachments/${session_id}?name=a.txt&mime=text/plain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    })
  expect((await upload(holder, bob)).status).toBe(404)
  const put = await upload(holder, alice)
  expect(put.status).toBe(200)
  const { attachment_id } = ((await put.json()) as { attachment: { attachment_id: string } }).attachment
  // Other sessions used since: the holder leaves the working set.
  for (let i = 10; i < 10 + 2 * BOUND; i++)
    await rpc(url, 'session::get', { session_id: idOf('alice', i) }, alice)
  await notHeld(url, holder, reuser)
  const reuse = (session_id: string, token: string): Promise<Response> =>
    fetch(
      `${url}/sync/attachments/${session_id}/att-reused?name=a.txt&size=${bytes.length}&sha256=${sha256}&created_at=0&reuse=1`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      },
    )
  expect((await reuse(idOf('bob', 0), bob)).status).toBe(409)
  expect((await reuse(reuser, alice)).status).toBe(200)
  const read = (token: string): Promise<Response> =>
    fetch(`${url}/attachments/${reuser}/att-reused`, { headers: { authorization: `Bearer ${token}` } })
  expect((await read(bob)).status).toBe(404)
  expect(await (await read(alice)).text()).toBe(bytes)
  expect(
    (
      await fetch(`${url}/attachments/${holder}/${attachment_id}`, {
        headers: { authorization: `Bearer ${bob}` },
      })
    ).status,
  ).toBe(404)

  // mention search: Alice finds her own session not held, never Bob's.
  const wanted = idOf('alice', fill.alice - 7)
  const found = await rpc<{ items: Array<{ id: string }> }>(
    url,
    'session::mention::search',
    { query: `alice chat ${fill.alice - 7}` },
    alice,
  )
  expect(found.items.map((i) => i.id)).toContain(wanted)
  const bobs = await rpc<{ items: Array<{ id: string }> }>(
    url,
    'session::mention::search',
    { query: 'alice chat' },
    bob,
  )
  expect(bobs.items).toEqual([])
  // A query the whole work budget cannot prepare (50,000 terms, under every size bound) has its
  // answer before any session is looked at: no page of heads is read for it.
  expect((await workingSet(url)).pageReads).toBeGreaterThan(0)
  const pagesBefore = (await workingSet(url)).pageReads
  const worst = Array.from({ length: 50_000 }, (_, i) => `w${i}`).join(' ')
  expect(await rpc(url, 'session::mention::search', { query: worst }, alice)).toEqual({
    items: [],
    incomplete: true,
  })
  expect((await workingSet(url)).pageReads).toBe(pagesBefore)

  expect((await workingSet(url)).held).toBeLessThanOrEqual(BOUND)
}
