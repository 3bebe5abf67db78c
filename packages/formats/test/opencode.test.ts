import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { type AssistantMessage, type FunctionResultMessage, type JsonObject } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { afterAll, describe, expect, it } from 'vitest'
import { detectFormat, importTranscript } from '../src/index.js'
import { summarize } from '../src/session/inspect.js'
import { nodeSqlite, readDirectory } from '../src/node.js'
import { byId, childrenOf, codes, messages, ofRole, pathIds, unansweredCalls } from './helpers.js'
import { CHILD, DB, DM, M, MAIN, openCodeDb, storageTree } from './fixtures/opencode.js'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe('OpenCode storage tree (seeds/004 layout)', () => {
  it('reads sessions, messages and parts by file and directory names; steps become turns; the task links its sub-agent session', async () => {
    const files = storageTree()
    expect(await detectFormat(files)).toBe('opencode')
    const r = await importTranscript(files)
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([MAIN, CHILD])
    const [main, child] = r.sessions
    expect(main.meta).toMatchObject({ title: 'Add a search box', created_at: Date.UTC(2026, 0, 10, 9, 0, 0) })
    expect(main.meta.metadata).toMatchObject({
      format: 'opencode',
      project_id: '2cd4e892d12c4ab6d769926a0ffa76d89f2777fe',
      worktree: '/home/riley/app',
      summary: { additions: 12, deletions: 3, files: 2 },
      todos: [{ id: '1', content: 'Add the search box', status: 'completed', priority: 'high' }],
      sidechains: [{ session_id: CHILD, tool_call_id: 'toolu_task_find' }],
    })
    expect(child.meta.metadata).toMatchObject({
      sidechain: true,
      parent_session_id: MAIN,
      parent_tool_call_id: 'toolu_task_find',
    })
    // Two steps: reasoning and two calls (their results follow), then the reply.
    expect(pathIds(main)).toEqual([
      M.u1,
      M.a1,
      'prt_bd6ca3d6d00303ToolRead00000',
      'prt_bd6ca3d6d00304ToolTask00000',
      'prt_bd6ca3d6d00306Step2Start000',
      M.u2,
    ])
    const step1 = byId(main).get(M.a1)! as { message: AssistantMessage }
    expect(step1.message.content.map((b) => b.type)).toEqual(['thinking', 'function_call', 'function_call'])
    expect(step1.message).toMatchObject({
      model: 'claude-opus-4-5',
      provider: 'anthropic',
      agent: 'build',
      stop_reason: 'function_call',
      native_stop_reason: 'tool-calls',
      usage: { input: 2000, output: 200, reasoning: 40, cache_read: 10000, cache_write: 800, cost_usd: 0.03 },
    })
    const step2 = byId(main).get('prt_bd6ca3d6d00306Step2Start000')! as { message: AssistantMessage }
    expect(step2.message).toMatchObject({
      content: [{ type: 'text', text: 'Added <Search/> to the header.' }],
      stop_reason: 'end',
      usage: { input: 400, output: 110, cost_usd: 0.0121 },
    })
    const read = byId(main).get('prt_bd6ca3d6d00303ToolRead00000')! as { message: FunctionResultMessage }
    expect(read.message).toMatchObject({
      function_call_id: 'toolu_read_header',
      function_id: 'read',
      content: [{ type: 'text', text: 'export function Header() {}' }],
      is_error: false,
      details: { title: 'src/header.tsx' },
    })
    expect(ofRole(main, 'user')[0].message.content).toEqual([
      { type: 'text', text: 'Add a search box like this mock' },
      { type: 'image', mime: 'image/png', data: expect.stringMatching(/^iVBORw0KGgo/) },
    ])
    expect(unansweredCalls(main)).toEqual([])
    expect(messages(child).map((e) => e.message.role)).toEqual(['user', 'assistant'])
    expect(r.warnings).toEqual([])
    expect(r.skipped).toEqual({
      'file migration': 1,
      'session_diff file': 1,
      'part/step-start': 2,
      'part/step-finish (usage kept)': 2,
      'part/patch': 1,
    })
  })

  it('ids come from file and directory names, not from JSON an old migration left stale', async () => {
    const files = storageTree()
    const path = `message/${MAIN}/${M.u2}.json`
    files[path] = JSON.stringify({
      ...JSON.parse(files[path]),
      id: 'msg_00000000000staleIdLeftOver',
      sessionID: 'ses_gone',
    })
    const r = await importTranscript(files)
    expect(pathIds(r.sessions[0]).at(-1)).toBe(M.u2)
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([MAIN, CHILD])
  })

  it('a compaction request and its summary answer: a compaction entry, then the summary message', async () => {
    const files = storageTree()
    const u3 = 'msg_bd6ca3a6b010Compact0000000'
    const a3 = 'msg_bd6ca3a6b011Summary0000000'
    files[`message/${MAIN}/${u3}.json`] = JSON.stringify({
      id: u3,
      sessionID: MAIN,
      role: 'user',
      time: { created: Date.UTC(2026, 0, 10, 10) },
    })
    files[`part/${u3}/prt_bd6ca3d6d01000Compaction0000.json`] = JSON.stringify({
      id: 'prt_bd6ca3d6d01000Compaction0000',
      type: 'compaction',
      auto: true,
      overflow: true,
    })
    files[`message/${MAIN}/${a3}.json`] = JSON.stringify({
      id: a3,
      sessionID: MAIN,
      role: 'assistant',
      parentID: u3,
      summary: true,
      modelID: 'claude-opus-4-5',
      providerID: 'anthropic',
      mode: 'compaction',
      time: { created: Date.UTC(2026, 0, 10, 10, 0, 5) },
      tokens: { input: 9000, output: 400, reasoning: 0, cache: { read: 0, write: 0 } },
      cost: 0.05,
    })
    files[`part/${a3}/prt_bd6ca3d6d01100SummaryText000.json`] = JSON.stringify({
      id: 'prt_bd6ca3d6d01100SummaryText000',
      type: 'text',
      text: 'Summary: a search box was added to the header.',
    })
    const s = (await importTranscript(files)).sessions[0]
    expect(pathIds(s).slice(-3)).toEqual([M.u2, 'prt_bd6ca3d6d01000Compaction0000', a3])
    expect(byId(s).get('prt_bd6ca3d6d01000Compaction0000')).toMatchObject({
      kind: 'custom',
      custom_type: 'compaction',
      data: { source: 'opencode', auto: true, overflow: true },
    })
    expect(byId(s).get(a3)).toMatchObject({
      origin: { summary: true },
      message: {
        role: 'assistant',
        agent: 'compaction',
        content: [{ type: 'text', text: 'Summary: a search box was added to the header.' }],
      },
    })
  })

  it('reads a storage directory from disk through the Node helper (files stay Blobs until read)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'oc-storage-'))
    dirs.push(root)
    for (const [path, text] of Object.entries(storageTree())) {
      mkdirSync(dirname(join(root, 'storage', path)), { recursive: true })
      writeFileSync(join(root, 'storage', path), text)
    }
    const files = await readDirectory(root)
    expect(Object.values(files).every((f) => f instanceof Blob)).toBe(true)
    const r = await importTranscript(files)
    expect(r.sessions.map((s) => [s.meta.session_id, s.entries.length])).toEqual([
      [MAIN, 6],
      [CHILD, 2],
    ])
  })
})

describe('OpenCode SQLite database (opencode.db) with branches', () => {
  it('is recognised by its header and read through sql.js', async () => {
    const bytes = await openCodeDb(await nodeSqlite())
    expect(await detectFormat(bytes)).toBe('opencode')
    const r = await importTranscript(bytes, { sqlite: await nodeSqlite() })
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([DB.main, DB.child, DB.reverted])
    for (const s of r.sessions) expect(() => checkImport(s)).not.toThrow()
  })

  it('an answer to an earlier prompt is a branch; retries continue a turn; the newest branch is active', async () => {
    const r = await importTranscript(await openCodeDb(await nodeSqlite()), { sqlite: await nodeSqlite() })
    const main = r.sessions[0]
    const a1 = pathIds(main).slice(0, 4)
    // U1, then A1's two steps: the task call with its result, then the reply.
    expect(a1[0]).toBe(DM.u1)
    expect(a1[1]).toBe(DM.a1)
    const a1tail = a1[3]
    expect(childrenOf(main, a1tail)).toEqual([DM.u2, DM.a4])
    expect(summarize(main)).toMatchObject({ forks: 1, branches: 2 })
    expect(pathIds(main).slice(3)).toEqual([a1tail, DM.a4, DM.u3, DM.a5])
    // The abandoned branch: U2, the failed answer A2, then A3 continuing the same turn.
    const rust = pathIds(main, childrenOf(main, DM.a3)[0])
    expect(rust.slice(3)).toEqual([a1tail, DM.u2, DM.a2, DM.a3, childrenOf(main, DM.a3)[0]])
    const a2 = byId(main).get(DM.a2)! as { message: AssistantMessage }
    expect(a2.message).toMatchObject({
      stop_reason: 'error',
      error_kind: 'transient',
      error_message: 'Overloaded',
    })
    const cargo = byId(main).get(childrenOf(main, DM.a3)[0])! as { message: FunctionResultMessage }
    expect(cargo.message).toMatchObject({
      function_call_id: 'call_cargo',
      is_error: true,
      content: [{ type: 'text', text: 'cargo: command not found' }],
    })
    // The pending call never ran: no result, and a warning says so.
    expect(unansweredCalls(main)).toEqual(['call_pending'])
    expect(r.warnings.filter((w) => w.code === 'unpaired-call').map((w) => w.session_id)).toEqual([DB.main])
    expect(ofRole(main, 'user')[0].origin).toEqual({ ignored_parts: [expect.stringMatching(/^prt_/)] })
    expect(ofRole(main, 'user')[1].message.content.map((b) => b.type)).toEqual(['text', 'image'])
    expect(main.meta.metadata).toMatchObject({
      slug: 'slug-on0001',
      version: '1.2.4',
      todos: [
        { content: 'Port to Rust', status: 'in_progress' },
        { content: 'Add tests', status: 'completed' },
      ],
      sidechains: [{ session_id: DB.child, tool_call_id: 'call_task_1' }],
    })
  })

  it('a reverted session hides the undone messages from the active path but keeps them', async () => {
    const r = await importTranscript(await openCodeDb(await nodeSqlite()), { sqlite: await nodeSqlite() })
    const s = r.sessions.find((x) => x.meta.session_id === DB.reverted)!
    expect(pathIds(s)).toEqual([DM.r1, DM.r2])
    expect(s.entries.map((e) => e.id)).toEqual([DM.r1, DM.r2, DM.r3, DM.r4])
    expect(s.meta.metadata).toMatchObject({ revert: { messageID: DM.r3, snapshot: 'a1b2c3' } })
  })

  it('the sub-agent session is linked to the task call that ran it', async () => {
    const r = await importTranscript(await openCodeDb(await nodeSqlite()), { sqlite: await nodeSqlite() })
    const child = r.sessions.find((x) => x.meta.session_id === DB.child)!
    expect(child.meta.metadata).toMatchObject({
      sidechain: true,
      parent_session_id: DB.main,
      parent_tool_call_id: 'call_task_1',
    })
    expect((ofRole(child, 'assistant')[0].message as AssistantMessage).agent).toBe('general')
    expect(codes(r)).toEqual(['unpaired-call'])
    expect(r.skipped).toMatchObject({ 'table permission': 1 })
  })

  // No public 1.16 database: this one is the fixture rewritten the way 1.16 stores rows (ids
  // only in the id columns, not in the JSON data) plus the `event` table it adds.
  it('a 1.16 database: ids only in columns, an event table', async () => {
    const { default: init } = await import('sql.js')
    const SQL = await init(await nodeSqlite())
    const before = await importTranscript(await openCodeDb(await nodeSqlite()), {
      sqlite: await nodeSqlite(),
    })
    const db = new SQL.Database(await openCodeDb(await nodeSqlite()))
    for (const table of ['message', 'part']) {
      const rows = db.exec(`SELECT id, data FROM ${table}`)[0].values
      for (const [id, data] of rows) {
        const { id: _id, sessionID: _s, messageID: _m, ...rest } = JSON.parse(String(data)) as JsonObject
        db.run(`UPDATE ${table} SET data = ? WHERE id = ?`, [JSON.stringify(rest), String(id)])
      }
    }
    db.run(
      'CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)',
    )
    db.run("INSERT INTO event VALUES ('evt_1', ?, 1, 'message.updated', '{}')", [DB.main])
    const bytes = db.export()
    db.close()
    const r = await importTranscript(bytes, { sqlite: await nodeSqlite() })
    expect(r.sessions.map((s) => [s.meta.session_id, s.entries.map((e) => e.id)])).toEqual(
      before.sessions.map((s) => [s.meta.session_id, s.entries.map((e) => e.id)]),
    )
    expect(r.sessions.map((s) => s.active_leaf)).toEqual(before.sessions.map((s) => s.active_leaf))
    expect(r.skipped).toMatchObject({ 'table event': 1 })
  })

  it('a database without OpenCode tables is refused with a clear error', async () => {
    const { default: init } = await import('sql.js')
    const SQL = await init(await nodeSqlite())
    const db = new SQL.Database()
    db.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
    const bytes = db.export()
    db.close()
    await expect(importTranscript(bytes, { sqlite: await nodeSqlite() })).rejects.toThrow(
      /format\/invalid: an SQLite database without OpenCode message and part tables/,
    )
  })
})

describe('OpenCode export JSON', () => {
  it('`opencode export` output ({info, messages:[{info, parts}]}) imports like the storage tree', async () => {
    const tree = storageTree()
    const info = JSON.parse(
      tree[`session/2cd4e892d12c4ab6d769926a0ffa76d89f2777fe/${MAIN}.json`],
    ) as JsonObject
    const msgs = Object.entries(tree)
      .filter(([p]) => p.startsWith(`message/${MAIN}/`))
      .map(([, t]) => JSON.parse(t) as JsonObject)
    const parts = (id: string) =>
      Object.entries(tree)
        .filter(([p]) => p.startsWith(`part/${id}/`))
        .map(([, t]) => JSON.parse(t))
    const doc = { info, messages: msgs.map((m) => ({ info: m, parts: parts(String(m.id)) })) }
    const r = await importTranscript(JSON.stringify(doc, null, 2))
    expect(r.format).toBe('opencode')
    expect(pathIds(r.sessions[0])).toHaveLength(6)
  })
})
