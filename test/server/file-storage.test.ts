import { hostOf } from '@colloquy/core/host'
import { readdir, readFile, writeFile, appendFile, mkdir, rm, rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore, SessionError, type Store } from '@colloquy/core'
import { fileStorage, type FileStorageOptions } from '../../packages/server/src/storage/file/file-storage.js'
import { ChangeLog } from '../../packages/server/src/changes/change-log.js'
import { sessionFileName as fileOf } from '../../packages/server/src/storage/file/file-names.js'
import { cleanupAfterEach, user } from './helpers.js'

const { defer, dataDir } = cleanupAfterEach('fs')

/** A store over fileStorage with the contract's test clock and ids (ids continue across restarts). */
function opener(dir: string, extra: Partial<FileStorageOptions> = {}) {
  let t = 1_000_000
  const counters = { session: 0, entry: 0, attachment: 0 }
  const warnings: string[] = []
  /** `crashing`: the store will hang at a commit point, as a dead process would; it is abandoned, never closed. */
  const open = async (more: Partial<FileStorageOptions> = {}, crashing = false): Promise<Store> => {
    const store = await createStore({
      storage: fileStorage({ dir, warn: (m) => warnings.push(m), ...extra, ...more }),
      now: () => t,
      newId: (k) => `${k[0]}_${String(++counters[k]).padStart(3, '0')}`,
      multiTab: false,
    })
    if (!crashing) defer(() => store.close())
    return store
  }
  return { open, warnings, advance: (ms: number) => void (t += ms) }
}

/** A commit-point hook that, once armed, stops the commit there for good (a dead process) and says when it got there. */
function deathAt() {
  let armed = false
  let reached!: () => void
  const there = new Promise<void>((resolve) => (reached = resolve))
  return {
    hook: () => (armed ? (reached(), new Promise<void>(() => {})) : undefined),
    arm: () => void (armed = true),
    there,
  }
}

const sessionFiles = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort()
const lines = async (path: string): Promise<Array<Record<string, unknown>>> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe("fileStorage: the contract's persistence scenarios", () => {
  it('143. each session gets its own file', async () => {
    const dir = await dataDir()
    const store = await opener(dir).open()
    await store.create({})
    await store.create({})
    expect(await sessionFiles(dir)).toStrictEqual([fileOf('s_001'), fileOf('s_002')].sort())
  })

  it('144. a restart replays identical state', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const a = await o.open()
    const { session_id } = await a.create({ title: 'persisted', metadata: { owner: 'u_1' } })
    await a.append({ session_id, message: user('one') })
    await a.append({
      session_id,
      message: {
        role: 'assistant',
        content: [],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: 0,
      },
    })
    await a.updateMessage({ session_id, entry_id: 'e_002', content: [{ type: 'text', text: 'streamed' }] })
    await a.setStatus({ session_id, status: 'done' })
    await a.setActiveLeaf({ session_id, entry_id: 'e_001' })
    const before = await a.get({ session_id })
    await a.close()

    const b = await o.open()
    expect(await b.get({ session_id })).toStrictEqual(before)
    expect(before!.meta).toMatchObject({
      title: 'persisted',
      status: 'done',
      message_count: 2,
      metadata: { owner: 'u_1' },
    })
    expect((await b.getMessage({ session_id, entry_id: 'e_002' }))!.entry).toMatchObject({
      revision: 1,
      message: { content: [{ type: 'text', text: 'streamed' }] },
    })
    expect((await b.append({ session_id, message: user('three') })).parent_id).toBe('e_001')
    expect((await b.messages({ session_id })).messages.map((m) => m.entry_id)).toStrictEqual([
      'e_001',
      'e_003',
    ])
  })

  it('145. hostile session ids are encoded but work end to end', async () => {
    const parent = await dataDir()
    const dir = join(parent, 'data')
    const o = opener(dir)
    const a = await o.open()
    const id = '../escape/chat 42:?'
    await a.ensure({ session_id: id })
    await a.append({ session_id: id, message: user('inside') })
    expect((await a.messages({ session_id: id })).messages).toHaveLength(1)
    expect(await sessionFiles(dir)).toStrictEqual([fileOf('../escape/chat 42:?')])
    // Nothing was written outside the data directory.
    expect((await readdir(parent)).sort()).toStrictEqual(['data'])
    await a.close()
    const b = await o.open()
    expect((await b.list({})).sessions.map((s) => s.session_id)).toStrictEqual([id])
  })

  it('146. deleting a session removes its file, and it stays deleted after a restart', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const a = await o.open()
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('bye') })
    expect(await a.delete({ session_id })).toStrictEqual({ deleted: true })
    expect(await sessionFiles(dir)).toStrictEqual([])
    await a.close()
    const b = await o.open()
    expect(await b.get({ session_id })).toBeNull()
  })
})

describe("fileStorage: the seed's record format", () => {
  it('writes an append as one atomic append record and an update as entry + meta, every line tagged with its commit, a meta as what changed of it', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const store = await o.open()
    const { session_id } = await store.create({
      title: 't',
      metadata: { owner: 'u_1', big: 'x'.repeat(600) },
    })
    await store.append({ session_id, message: user('hi') })
    o.advance(10)
    await store.updateMessage({ session_id, entry_id: 'e_001', content: [{ type: 'text', text: 'edited' }] })
    await store.setActiveLeaf({ session_id, entry_id: 'e_001' })
    await store.appendMany({ session_id, messages: [user('a'), user('b')] })
    await store.setMeta({ session_id, title: 'retitled' })
    const recs = await lines(join(dir, fileOf('s_001')))
    expect(recs.map((r) => r.type)).toStrictEqual([
      'meta',
      'append',
      'entry',
      'meta',
      'version',
      'entry',
      'entry',
      'leaf',
      'meta',
      'meta',
    ])
    // The first meta is whole; the others hold only the fields that changed.
    expect(recs[0].meta).toMatchObject({ title: 't', metadata: { big: 'x'.repeat(600) } })
    expect(recs[1]).toStrictEqual({
      type: 'append',
      entry: expect.objectContaining({ id: 'e_001', parent_id: null, revision: 0 }),
      set: { message_count: 1 },
      v: 2,
      tx: 2,
    })
    expect(recs[2]).toMatchObject({ entry: { id: 'e_001', revision: 1 } })
    expect(recs[3]).toStrictEqual({ type: 'meta', set: { updated_at: 1_000_010 }, v: 3, tx: 3 })
    // A commit that changed nothing else the file holds (the leaf set where it was) keeps its `v`.
    expect(recs[4]).toStrictEqual({ type: 'version', v: 4, tx: 4 })
    expect(recs[7]).toMatchObject({ type: 'leaf', entry_id: 'e_003' })
    expect(recs[8]).toStrictEqual({ type: 'meta', set: { message_count: 3 }, v: 5, tx: 5 })
    expect(recs[9]).toStrictEqual({ type: 'meta', set: { title: 'retitled' }, v: 6, tx: 6 })
    expect(recs.every((r) => typeof r.tx === 'number')).toBe(true)
    const before = await store.get({ session_id })
    expect(before!.meta).toMatchObject({
      title: 'retitled',
      message_count: 3,
      metadata: { big: 'x'.repeat(600) },
    })
    await store.close()
    expect(await (await o.open()).get({ session_id })).toStrictEqual(before)
  })

  it('reads a directory written by the seed: no commit tags, the older three-record append, a crash-orphaned entry', async () => {
    const dir = await dataDir()
    const meta = (n: number, leaf?: string) => ({
      session_id: 'chat-1',
      title: 'seed',
      description: '',
      status: 'idle',
      created_at: 5,
      updated_at: 5 + n,
      message_count: n,
      ...(leaf ? {} : {}),
    })
    const entry = (id: string, parent: string | null, text: string, revision?: number) => ({
      id,
      parent_id: parent,
      timestamp: 5,
      ...(revision !== undefined && { revision }),
      kind: 'message',
      message: user(text),
    })
    const file = [
      { type: 'meta', meta: meta(0) },
      // The older three-record append: entry, leaf, meta (which commits the active path).
      { type: 'entry', entry: entry('a', null, 'one') },
      { type: 'leaf', entry_id: 'a' },
      { type: 'meta', meta: meta(1) },
      // The newer atomic append, then an update.
      { type: 'append', entry: entry('b', 'a', 'two'), meta: meta(2) },
      { type: 'entry', entry: entry('b', 'a', 'two, edited', 1) },
      // A crash after the entry line of a three-record append: never committed.
      { type: 'entry', entry: entry('c', 'b', 'lost') },
      { type: 'leaf', entry_id: 'c' },
    ]
    await writeFile(join(dir, 'chat-1.jsonl'), file.map((r) => JSON.stringify(r)).join('\n') + '\n')
    const store = await opener(dir).open()
    const got = await store.get({ session_id: 'chat-1' })
    // `kind` was not in early seed records: it reads back as user.
    expect(got!.meta).toMatchObject({ title: 'seed', kind: 'user', message_count: 2 })
    expect(
      (await store.messages({ session_id: 'chat-1' })).messages.map((m) => [m.entry_id, m.message!.content]),
    ).toStrictEqual([
      ['a', [{ type: 'text', text: 'one' }]],
      ['b', [{ type: 'text', text: 'two, edited' }]],
    ])
    expect(await store.getMessage({ session_id: 'chat-1', entry_id: 'c' })).toBeNull()
    // The retried append commits afresh: the leaf moves and the count grows.
    expect(await store.append({ session_id: 'chat-1', entry_id: 'c', message: user('lost') })).toMatchObject({
      entry_id: 'c',
      parent_id: 'b',
    })
    expect((await store.get({ session_id: 'chat-1' }))!.meta.message_count).toBe(3)
  })

  it('opens what this server wrote before meta patches: every append with its whole meta, in the session file and in a journal line to redo', async () => {
    const dir = await dataDir()
    const meta = (n: number) => ({
      session_id: 'old',
      title: 'from before',
      description: '',
      status: 'idle',
      kind: 'user',
      metadata: { owner: 'u_1', note: 'n'.repeat(200) },
      created_at: 5,
      updated_at: 5 + n,
      message_count: n,
    })
    const entry = (id: string, parent: string | null) => ({
      id,
      parent_id: parent,
      timestamp: 5,
      revision: 0,
      kind: 'message',
      message: user(id),
    })
    const records = [
      { type: 'meta', meta: meta(0), tx: 1 },
      { type: 'append', entry: entry('a', null), meta: meta(1), tx: 2 },
      { type: 'append', entry: entry('b', 'a'), meta: meta(2), tx: 3 },
    ].map((r) => JSON.stringify(r) + '\n')
    // The session file missed the last commit (a crash before its write-back): the journal redoes it.
    await writeFile(join(dir, fileOf('old')), records.slice(0, 2).join(''))
    await mkdir(join(dir, '.colloquy'))
    await writeFile(
      join(dir, '.colloquy', 'journal.jsonl'),
      records
        .map((text, i) => JSON.stringify({ tx: i + 1, side: [], v: 2, writes: [['old', text]] }) + '\n')
        .join(''),
    )
    const o = opener(dir)
    const a = await o.open()
    expect(o.warnings.join('\n')).toMatch(/redid 1 session file write/)
    expect((await a.get({ session_id: 'old' }))!.meta).toStrictEqual(meta(2))
    expect((await a.messages({ session_id: 'old' })).messages.map((m) => m.entry_id)).toStrictEqual([
      'a',
      'b',
    ])
    o.advance(1)
    await a.append({ session_id: 'old', message: user('new') })
    const after = await a.get({ session_id: 'old' })
    expect(after!.meta).toMatchObject({ message_count: 3, metadata: meta(0).metadata })
    await a.close()
    const text = await readFile(join(dir, fileOf('old')), 'utf8')
    expect(text.startsWith(records.join(''))).toBe(true)
    // The new append names only the count and time it changed.
    expect(JSON.parse(text.slice(records.join('').length))).toMatchObject({
      type: 'append',
      set: { message_count: 3, updated_at: 1_000_001 },
    })
    // Read again from the files alone (the head index removed): the same head.
    await rm(join(dir, '.colloquy', 'heads.jsonl'), { force: true })
    const b = await o.open()
    expect(await b.get({ session_id: 'old' })).toStrictEqual(after)
    expect((await b.messages({ session_id: 'old' })).messages.map((m) => m.entry_id)).toStrictEqual([
      'a',
      'b',
      'e_001',
    ])
  })

  it('skips undecodable file names and malformed lines, with a warning', async () => {
    const dir = await dataDir()
    await writeFile(
      join(dir, 'bad%zz.jsonl'),
      JSON.stringify({ type: 'meta', meta: { session_id: 'x', created_at: 1 } }) + '\n',
    )
    await writeFile(
      join(dir, 'ok.jsonl'),
      [
        JSON.stringify({ type: 'meta', meta: { session_id: 'ok', title: 'fine', created_at: 1 } }),
        '{not json',
        JSON.stringify({ type: 'mystery' }),
        // A meta patch may not move the record to another session, nor make a meta no meta could be.
        JSON.stringify({ type: 'meta', set: { session_id: 'other' } }),
        JSON.stringify({ type: 'meta', set: { created_at: 'soon' } }),
        JSON.stringify({ type: 'meta', unset: ['title', 'created_at'] }),
      ].join('\n') + '\n',
    )
    const o = opener(dir)
    const store = await o.open()
    expect((await store.list({})).sessions.map((s) => [s.session_id, s.title])).toStrictEqual([
      ['ok', 'fine'],
    ])
    expect(o.warnings.join('\n')).toMatch(/ok\+[0-9a-f]{64}\.jsonl: skipped 5 malformed line/)
  })
})

describe("fileStorage: a head's version", () => {
  it('is the one committed after every restart: over the head index, over the session files alone, after a commit redone from the journal, after an attachment-only commit', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const heads = (store: Store) =>
      Object.fromEntries([...hostOf(store).heads()].map((h) => [h.meta.session_id, h] as const))
    const a = await o.open()
    const { session_id } = await a.create({ title: 'versioned' })
    for (let i = 0; i < 3; i++) await a.append({ session_id, message: user(`m${i}`) })
    await a.setActiveLeaf({ session_id, entry_id: 'e_001' })
    await a.putAttachment({
      session_id,
      name: 'a.txt',
      mime: 'text/plain',
      data: Buffer.from('abc').toString('base64'),
    })
    const other = (await a.create({ title: 'other' })).session_id
    const before = heads(a)
    expect(before[session_id].v).toBe(6)
    await a.close()

    // The journal has not been checkpointed: these sessions are read again from their files.
    const b = await o.open()
    expect(heads(b)).toStrictEqual(before)
    await b.close()
    // With the head index removed, every head comes from the session files.
    await rm(join(dir, '.colloquy', 'heads.jsonl'), { force: true })
    const c = await o.open()
    expect(heads(c)).toStrictEqual(before)
    await c.append({ session_id: other, message: user('after') })
    const later = heads(c)
    expect(later[other].v).toBe(before[other].v + 1)
    await c.close()

    // A commit cut off after its journal line: redone on open, with its version.
    const death = deathAt()
    const d = await o.open({ afterCommitPoint: death.hook }, true)
    expect(heads(d)).toStrictEqual(later)
    death.arm()
    void d.append({ session_id, message: user('redone') })
    await death.there
    const e = await o.open()
    expect(o.warnings.join('\n')).toMatch(/redid 1 session file write/)
    expect(heads(e)[session_id].v).toBe(before[session_id].v + 1)
    expect(heads(e)[other]).toStrictEqual(later[other])
  })
})

describe('fileStorage: crashes and failed writes', () => {
  it('repairs a torn last line: the state before it is kept and the next append lands on a clean line', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const a = await o.open()
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('kept') })
    await a.close()
    const path = join(dir, fileOf('s_001'))
    const intact = await readFile(path, 'utf8')
    await appendFile(path, '{"type":"append","entry":{"id":"e_9","par')

    const b = await o.open()
    expect(o.warnings.join('\n')).toMatch(/cutting \d+ bytes/)
    expect(await readFile(path, 'utf8')).toBe(intact)
    expect((await b.messages({ session_id })).messages.map((m) => m.entry_id)).toStrictEqual(['e_001'])
    await b.append({ session_id, message: user('after') })
    await b.close()
    const c = await o.open()
    expect((await c.messages({ session_id })).messages.map((m) => m.entry_id)).toStrictEqual([
      'e_001',
      'e_002',
    ])
  })

  it('keeps a whole last record that only lost its newline', async () => {
    const dir = await dataDir()
    const record = JSON.stringify({
      type: 'meta',
      meta: { session_id: 'nl', title: 'no newline', created_at: 1 },
    })
    await writeFile(join(dir, 'nl.jsonl'), record)
    const store = await opener(dir).open()
    expect((await store.get({ session_id: 'nl' }))!.meta.title).toBe('no newline')
    expect(await readFile(join(dir, fileOf('nl')), 'utf8')).toBe(record + '\n')
  })

  it('a failed commit writes nothing: the operation fails with session/storage and memory equals disk', async () => {
    const dir = await dataDir()
    let fail = false
    const o = opener(dir, {
      beforeCommitPoint: () => {
        if (fail) throw new Error('disk full')
      },
    })
    const a = await o.open()
    const { session_id } = await a.create({ title: 'before' })
    await a.append({ session_id, message: user('one') })
    const file = await readFile(join(dir, fileOf('s_001')), 'utf8')
    fail = true
    const error = await a.append({ session_id, message: user('two') }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionError)
    expect((error as SessionError).code).toBe('session/storage')
    await expect(a.create({ title: 'new' })).rejects.toMatchObject({ code: 'session/storage' })
    expect(await readFile(join(dir, fileOf('s_001')), 'utf8')).toBe(file)
    expect(await sessionFiles(dir)).toStrictEqual([fileOf('s_001')])
    expect((await a.get({ session_id }))!.meta.message_count).toBe(1)
    fail = false
    expect((await a.append({ session_id, message: user('three') })).parent_id).toBe('e_001')
    await a.close()
    const b = await o.open()
    expect((await b.messages({ session_id })).messages.map((m) => m.message!.content[0])).toStrictEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'three' },
    ])
  })

  it('a commit that dies before its journal line leaves nothing behind', async () => {
    const dir = await dataDir()
    const death = deathAt()
    const o = opener(dir)
    // The process "dies" at the commit point: the store hangs there and is abandoned.
    const a = await o.open({ beforeCommitPoint: death.hook }, true)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('committed') })
    const file = await readFile(join(dir, fileOf('s_001')), 'utf8')
    death.arm()
    void a.append({ session_id, message: user('in flight') })
    void a.create({ title: 'also in flight' })
    await death.there

    const b = await o.open()
    expect((await b.messages({ session_id })).messages.map((m) => m.entry_id)).toStrictEqual(['e_001'])
    expect((await b.list({})).sessions.map((s) => s.session_id)).toStrictEqual(['s_001'])
    expect(await readFile(join(dir, fileOf('s_001')), 'utf8')).toBe(file)
    expect(await sessionFiles(dir)).toStrictEqual([fileOf('s_001')])
  })

  it('a commit that dies after its journal line is redone into the session files on open', async () => {
    const dir = await dataDir()
    const death = deathAt()
    const o = opener(dir)
    const a = await o.open({ afterCommitPoint: death.hook }, true)
    const { session_id } = await a.create({ title: 'kept' })
    await a.append({ session_id, message: user('one') })
    death.arm()
    void a.append({ session_id, message: user('two, committed in the journal only') })
    await death.there
    expect((await lines(join(dir, fileOf('s_001')))).length).toBe(2)

    const b = await o.open()
    expect(o.warnings.join('\n')).toMatch(/redid 1 session file write/)
    expect((await b.messages({ session_id })).messages.map((m) => m.message!.content[0])).toStrictEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two, committed in the journal only' },
    ])
    expect((await lines(join(dir, fileOf('s_001')))).length).toBe(3)
  })

  it('redoes what a lost write-back cut from session files: a missing tail, a half-written commit, a vanished file', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const a = await o.open()
    const s1 = (await a.create({ title: 'one' })).session_id
    await a.append({ session_id: s1, message: user('a') })
    await a.appendMany({ session_id: s1, messages: [user('b'), user('c')] })
    const s2 = (await a.create({ title: 'two' })).session_id
    await a.append({ session_id: s2, message: user('z') })
    const before = { s1: await a.messages({ session_id: s1 }), s2: await a.get({ session_id: s2 }) }
    await a.close()
    // As after a power cut: the last commit of s1 (entry, entry, leaf, meta) kept only 1 line; s2 never reached the disk.
    const path = join(dir, fileOf('s_001'))
    const text = (await readFile(path, 'utf8')).split('\n').filter(Boolean)
    await writeFile(path, text.slice(0, text.length - 3).join('\n') + '\n')
    const { unlink } = await import('node:fs/promises')
    await unlink(join(dir, fileOf('s_002')))

    const b = await o.open()
    expect(await b.messages({ session_id: s1 })).toStrictEqual(before.s1)
    expect(await b.get({ session_id: s2 })).toStrictEqual(before.s2)
    expect((await readFile(path, 'utf8')).split('\n').filter(Boolean)).toStrictEqual(text)
  })

  it('a delete that died after its journal line is finished on open', async () => {
    const dir = await dataDir()
    const death = deathAt()
    const o = opener(dir)
    const a = await o.open({ afterCommitPoint: death.hook }, true)
    const { session_id } = await a.create({ title: 'doomed' })
    await a.append({ session_id, message: user('bye') })
    death.arm()
    void a.delete({ session_id })
    await death.there
    expect(await sessionFiles(dir)).toStrictEqual([fileOf('s_001')])

    const b = await o.open()
    expect(await b.get({ session_id })).toBeNull()
    expect(await sessionFiles(dir)).toStrictEqual([])
  })
})

describe('fileStorage: the journal', () => {
  it('keeps side records (the change log) across restarts, and checkpoints a long journal into one snapshot', async () => {
    const dir = await dataDir()
    const open = async () => {
      const log = new ChangeLog(fileStorage({ dir, checkpointBytes: 4096, warn: () => {} }))
      const store = await createStore({ storage: log.storage, multiTab: false })
      log.attach(hostOf(store))
      defer(() => store.close())
      return { log, store }
    }
    const journal = join(dir, '.colloquy', 'journal.jsonl')
    const journalLines = async () =>
      (await readFile(journal, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { snapshot?: boolean })
    const a = await open()
    const { session_id } = await a.store.create({})
    for (let i = 0; i < 40; i++)
      await a.store.append({ session_id, message: user(`message ${i} `.repeat(20)) })
    // Checkpoints ran while writing: the journal starts with a snapshot and stays short.
    const seen = await journalLines()
    expect(seen[0].snapshot).toBe(true)
    expect(seen.length).toBeLessThan(20)
    const head = a.log.head
    const page = await a.log.page(0, 1000)
    const transcript = await a.store.messages({ session_id, limit: 500 })
    await a.store.close()

    const b = await open()
    expect(b.log.head).toBe(head)
    expect(await b.log.page(0, 1000)).toStrictEqual(page)
    expect(await b.store.messages({ session_id, limit: 500 })).toStrictEqual(transcript)
    await b.store.append({ session_id, message: user('next') })
    expect(b.log.head).toBeGreaterThan(head)
  })
})

describe('fileStorage: names, migration and failing session files', () => {
  it('two ids never share a file: case twins, NFC and NFD, reserved Windows names, 255 bytes', async () => {
    const dir = await dataDir()
    const o = opener(dir)
    const a = await o.open()
    const ids = [
      'Chat-A',
      'chat-a',
      'caf\u00e9',
      'cafe\u0301',
      'CON',
      'aux.txt',
      'com1',
      'x'.repeat(255),
      'trailing. ',
    ]
    for (const id of ids) await a.ensure({ session_id: id, title: id })
    const files = await sessionFiles(dir)
    expect(files).toStrictEqual(ids.map(fileOf).sort())
    expect(new Set(files.map((f) => f.toLowerCase())).size).toBe(ids.length)
    for (const f of files) expect(f).toMatch(/^[a-z0-9-]{0,32}\+[0-9a-f]{64}\.jsonl$/)
    await a.close()
    const b = await o.open()
    for (const id of ids) expect((await b.get({ session_id: id }))!.meta.title).toBe(id)
  })

  it('a migration cut short by a crash is finished on the next open, the old journal redone under the new names', async () => {
    const dir = await dataDir()
    await mkdir(join(dir, '.colloquy'), { recursive: true })
    const meta = (session_id: string, n = 0) => ({
      session_id,
      title: session_id,
      created_at: 1,
      updated_at: 1,
      message_count: n,
    })
    const entry = (id: string) => ({ id, parent_id: null, timestamp: 1, kind: 'message', message: user(id) })
    const rec = (r: object, tx: number) => JSON.stringify({ ...r, tx }) + '\n'
    // "Done A" was renamed before the crash; "Todo B" was not.
    await writeFile(join(dir, fileOf('Done A')), rec({ type: 'meta', meta: meta('Done A') }, 1))
    await writeFile(join(dir, 'Todo%20B.jsonl'), rec({ type: 'meta', meta: meta('Todo B') }, 2))
    // An old-layout journal line (file names) neither file has taken yet.
    await writeFile(
      join(dir, '.colloquy', 'journal.jsonl'),
      [
        JSON.stringify({ tx: 2, side: [], snapshot: true }),
        JSON.stringify({
          tx: 3,
          side: [],
          writes: [
            ['Todo%20B.jsonl', rec({ type: 'append', entry: entry('b1'), meta: meta('Todo B', 1) }, 3)],
            ['Done%20A.jsonl', rec({ type: 'append', entry: entry('a1'), meta: meta('Done A', 1) }, 3)],
          ],
        }),
      ].join('\n') + '\n',
    )
    const o = opener(dir)
    const s = await o.open()
    expect((await s.messages({ session_id: 'Done A' })).messages.map((m) => m.entry_id)).toStrictEqual(['a1'])
    expect((await s.messages({ session_id: 'Todo B' })).messages.map((m) => m.entry_id)).toStrictEqual(['b1'])
    expect(await sessionFiles(dir)).toStrictEqual([fileOf('Done A'), fileOf('Todo B')].sort())
    await s.append({ session_id: 'Todo B', message: user('b2') })
    await s.close()
    const again = await o.open()
    expect((await again.messages({ session_id: 'Todo B' })).messages).toHaveLength(2)
  })

  it('a failing session file survives checkpoints: its writes stay in the journal, reads include them, and it is written once it can be', async () => {
    const dir = await dataDir()
    // A checkpoint after every commit.
    const o = opener(dir, { checkpointBytes: 1 })
    const a = await o.open()
    const ok = (await a.create({ title: 'ok' })).session_id
    const blocked = join(dir, fileOf('s_002'))
    await mkdir(blocked)
    const { session_id } = await a.create({ title: 'blocked' })
    expect(session_id).toBe('s_002')
    for (let i = 0; i < 3; i++) await a.append({ session_id, message: user(`held ${i}`) })
    for (let i = 0; i < 3; i++) await a.append({ session_id: ok, message: user(`ok ${i}`) })
    expect(o.warnings.join('\n')).toMatch(/cannot be written/)
    const journal = await readFile(join(dir, '.colloquy', 'journal.jsonl'), 'utf8')
    expect(journal.split('\n')[0]).toContain('"snapshot":true')
    expect(journal).toContain('held 2')
    expect(journal).not.toContain('ok 2')
    expect((await lines(join(dir, fileOf(ok)))).length).toBe(4)
    await a.close()

    // Reopened with the obstacle: the blocked session is served from the journal.
    const b = await o.open()
    expect((await b.messages({ session_id })).messages).toHaveLength(3)
    await b.close()
    await rmdir(blocked)
    const c = await o.open()
    expect((await c.messages({ session_id })).messages.map((m) => m.message!.content[0])).toStrictEqual(
      [0, 1, 2].map((i) => ({ type: 'text', text: `held ${i}` })),
    )
    expect((await lines(blocked)).some((r) => r.type === 'meta' || r.type === 'append')).toBe(true)
    await c.append({ session_id: ok, message: user('after') })
    expect(await readFile(join(dir, '.colloquy', 'journal.jsonl'), 'utf8')).not.toContain('held 2')
  })
})
