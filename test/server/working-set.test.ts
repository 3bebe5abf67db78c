import { describe, expect, it } from 'vitest'
import type { SessionMeta } from '@colloquy/core'
import { rpc, tempDir } from './helpers.js'
import { checkRoutes, fillServer, startWorkingSetServer, workingSet, BOUND } from './working-set.js'

describe('a server holding a working set of heads (memory storage serving heads on demand)', () => {
  it('answers list, history, push, pull, tenancy, quota and mentions for sessions it does not hold, within its bound', async () => {
    const fill = { alice: 300, bob: 60 }
    const server = await startWorkingSetServer(['--test-paged-memory'], fill)
    try {
      await fillServer(server.url, fill)
      expect((await workingSet(server.url)).held).toBeLessThanOrEqual(BOUND)
      await checkRoutes(server.url, fill)
    } finally {
      await server.stop()
    }
  }, 180_000)
})

/** Every one of Alice's sessions in `order`, a page of 37 at a time. */
async function listAll(url: string, order: string): Promise<SessionMeta[]> {
  const out: SessionMeta[] = []
  let cursor: string | undefined
  do {
    const page = await rpc<{ sessions: SessionMeta[]; next_cursor?: string }>(
      url,
      'session::list',
      { limit: 37, order, ...(cursor && { cursor }) },
      'tok-alice',
    )
    out.push(...page.sessions)
    cursor = page.next_cursor
  } while (cursor)
  return out
}

describe('a server over the file storage holding a working set of heads (its head index)', () => {
  it('restarts without reading a session file, and answers every route for sessions it does not hold, within its bound', async () => {
    const fill = { alice: 300, bob: 60 }
    const data = await tempDir('working-set-file')
    // A small checkpoint size: the head index on disk follows the fill's commits.
    const args = ['--data-dir', data.dir, '--test-checkpoint-bytes', '65536']
    try {
      const first = await startWorkingSetServer(args, fill)
      try {
        await fillServer(first.url, fill)
        expect((await workingSet(first.url)).held).toBeLessThanOrEqual(BOUND)
      } finally {
        await first.stop()
      }
      const server = await startWorkingSetServer(args, fill)
      try {
        const opened = await workingSet(server.url)
        expect(opened.allHeld).toBe(false)
        // Opening read the head index, not one of the 360 session files.
        expect(opened.sessionFileReads).toBe(0)
        expect(opened.held).toBe(0)
        await checkRoutes(server.url, fill)
        // The other orders, page by page, from the index: updated first (ties by id, descending), newest first.
        const byUpdate = await listAll(server.url, 'updated_desc')
        const expected = [...byUpdate].sort(
          (a, b) => b.updated_at - a.updated_at || (a.session_id < b.session_id ? 1 : -1),
        )
        expect(byUpdate.map((m) => m.session_id)).toEqual(expected.map((m) => m.session_id))
        expect(new Set(byUpdate.map((m) => m.session_id)).size).toBe(fill.alice)
        // The pushed-to session (checkRoutes appended to alice-00002) comes first.
        expect(byUpdate[0].session_id).toBe('alice-00002')
        const newest = await listAll(server.url, 'created_desc')
        expect(newest.map((m) => m.session_id)).toEqual(
          Array.from(
            { length: fill.alice },
            (_, i) => `alice-${String(fill.alice - 1 - i).padStart(5, '0')}`,
          ),
        )
        expect((await workingSet(server.url)).held).toBeLessThanOrEqual(BOUND)
      } finally {
        await server.stop()
      }
    } finally {
      await data.remove()
    }
  }, 240_000)
})
