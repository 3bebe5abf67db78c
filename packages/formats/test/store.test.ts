import {
  createStore,
  memoryStorage,
  SessionError,
  type ContentBlock,
  type SessionEntry,
  type Store,
} from '@colloquy/core'
import { strToU8, unzipSync, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { exportOpa, importInto, importTranscript, readSession, type Progress } from '../src/index.js'
import { fixture, pathIds, sample } from './helpers.js'

// importInto: all sessions of an input, checked first, then written; all or nothing.

const open = (storage = memoryStorage()): Promise<Store> => createStore({ storage, multiTab: false })
const listed = async (store: Store): Promise<string[]> =>
  (await store.list({ order: 'created_asc' })).sessions.map((s) => s.session_id)
/** Every block of a list, results' blocks included. */
const blocksOf = (list: readonly ContentBlock[]): ContentBlock[] =>
  list.flatMap((b) => (b.type === 'function_result' ? [b, ...blocksOf(b.content)] : [b]))
/** Every entry of a session (all branches) as stored, before any export fills images in. */
async function readAll(store: Store, session_id: string): Promise<SessionEntry[]> {
  await store.engine.ensureLoaded(session_id)
  return [...(store.engine.state.sessions.get(session_id)?.entries?.values() ?? [])]
}
const INLINE = 'claude-code/claude-code-viewer_cc-1.0.108_inline-sidechains.jsonl'

describe('importInto', () => {
  it('writes every session with progress: bytes read, then entries written, up to the total', async () => {
    const store = await open()
    const progress: Progress[] = []
    const r = await importInto(store, sample(INLINE), { onProgress: (p) => progress.push(p) })
    expect(r.written).toEqual([
      { session_id: '5c0375b4-57a5-4f26-b12d-d022ee4e51b7', entries: 25 },
      {
        session_id: '5c0375b4-57a5-4f26-b12d-d022ee4e51b7:sidechain-6340ddef-f656-4b72-a065-82390f637678',
        entries: 6,
      },
      {
        session_id: '5c0375b4-57a5-4f26-b12d-d022ee4e51b7:sidechain-83e2917c-8940-4df6-a5a5-f2514f0d08c5',
        entries: 14,
      },
    ])
    expect((await listed(store)).sort()).toEqual(r.written.map((w) => w.session_id).sort())
    const reads = progress.filter((p) => p.phase === 'read')
    expect(reads.at(-1)).toEqual({ phase: 'read', done: 125342, total: 125342 })
    const writes = progress.filter((p) => p.phase === 'write')
    expect(writes.map((p) => p.done)).toEqual([25, 31, 45])
    expect(writes.every((p) => p.total === 45)).toBe(true)
    expect(progress.findIndex((p) => p.phase === 'write')).toBeGreaterThan(
      progress.findLastIndex((p) => p.phase === 'read'),
    )
    // What the store holds reads back as imported: the active path through messages().
    const { messages } = await store.messages({
      session_id: '5c0375b4-57a5-4f26-b12d-d022ee4e51b7',
      limit: 100,
    })
    const imported = (await importTranscript(sample(INLINE))).sessions[0]
    expect(messages.map((m) => m.entry_id)).toEqual(pathIds(imported))
    await store.close()
  })

  it('keeps every branch: the stored tree has the abandoned branch and the same active leaf', async () => {
    const store = await open()
    await importInto(store, fixture('claude-rewind.jsonl'))
    const s = await readSession(store, 'sess-rewind')
    expect(s.entries.map((e) => e.id).sort()).toEqual([
      'a-1',
      'a-3',
      'a-4',
      'a-5',
      'a-6',
      'r-1',
      'r-2',
      'u-1',
      'u-2',
      'u-3',
    ])
    expect(s.active_leaf).toBe('a-6')
    expect(s.meta.message_count).toBe(10)
    await store.close()
  })

  it('a write that fails on the second session leaves no session at all', async () => {
    const storage = memoryStorage()
    const store = await open(storage)
    let failed = false
    const err = await importInto(store, sample(INLINE), {
      onProgress: (p) => {
        // Once the main session is on disk, make the next storage commit fail (a quota error).
        if (p.phase === 'write' && p.done === 25 && !failed) {
          failed = true
          storage.fail!(new DOMException('quota exceeded', 'QuotaExceededError'))
        }
      },
    }).catch((e: unknown) => e)
    expect(failed).toBe(true)
    expect(err).toBeInstanceOf(SessionError)
    expect((err as SessionError).code).toBe('session/storage')
    expect(await listed(store)).toEqual([])
    // Nothing half-written comes back after a restart either.
    await store.close()
    const reopened = await open(storage)
    expect(await listed(reopened)).toEqual([])
    await reopened.close()
  })

  it('an input whose session already exists writes nothing', async () => {
    const store = await open()
    await importInto(store, fixture('claude-regenerate.jsonl'))
    await expect(importInto(store, sample(INLINE))).resolves.toBeDefined()
    const before = await listed(store)
    await expect(importInto(store, fixture('claude-regenerate.jsonl'))).rejects.toThrow(
      'format/exists: session sess-regen is already in the store (imported before?); nothing was written',
    )
    expect(await listed(store)).toEqual(before)
    await store.close()
  })

  it('broken or hostile inputs leave the store empty', async () => {
    const store = await open()
    const bomb = zipSync({ 'session/history.json': new Uint8Array(16 << 20) }, { level: 9 })
    const evil = zipSync({ 'session/history.json': strToU8('{}'), '../x': strToU8('x') })
    for (const input of [
      bomb,
      evil,
      '{"schema_version":"1.0","messages":[',
      'not a transcript',
      new Uint8Array([0x53, 0x51, 0x4c]),
    ]) {
      await expect(importInto(store, input)).rejects.toThrow(/^format\//)
    }
    expect(await listed(store)).toEqual([])
    await store.close()
  })

  it('files and inline images are stored as attachments: entries keep only the links, exports get the bytes back', async () => {
    const store = await open()
    const r = await importInto(store, fixture('claude-images.jsonl'))
    expect(r.attachments).toHaveLength(1)
    expect(r.warnings.map((w) => w.code)).not.toContain('attachments-not-stored')
    const session_id = r.written[0].session_id
    const { attachments } = await store.listAttachments({ session_id })
    // The PDF the transcript carried, and every distinct inline image.
    expect(attachments.map((a) => a.mime)).toContain('application/pdf')
    const images = attachments.filter((a) => a.mime.startsWith('image/'))
    expect(images.length).toBeGreaterThan(0)
    const pdf = attachments.find((a) => a.mime === 'application/pdf')!
    expect(pdf.attachment_id).toBe(r.attachments[0].attachment_id)
    expect(pdf.size).toBe(r.attachments[0].data.byteLength)
    // No image bytes in any stored entry; each image block links a stored original.
    const stored = await readAll(store, session_id)
    const imageBlocks = stored
      .flatMap((e) => (e.kind === 'message' ? blocksOf(e.message.content) : []))
      .filter((b) => b.type === 'image')
    expect(imageBlocks.length).toBeGreaterThan(0)
    for (const b of imageBlocks) {
      expect(b).toMatchObject({ data: '' })
      expect(images.map((a) => a.attachment_id)).toContain((b as { attachment_id: string }).attachment_id)
    }
    // The original bytes are intact, and readSession (what exporters read) puts them back inline.
    const original = (await importTranscript(fixture('claude-images.jsonl'))).sessions[0]
    const firstImage = original.entries
      .flatMap((e) => (e.kind === 'message' ? blocksOf(e.message.content) : []))
      .find((b) => b.type === 'image') as { data: string }
    const back = await readSession(store, session_id)
    const backImages = back.entries
      .flatMap((e) => (e.kind === 'message' ? blocksOf(e.message.content) : []))
      .filter((b) => b.type === 'image') as Array<{ data: string }>
    expect(backImages.map((b) => b.data)).toContain(firstImage.data)
    expect(backImages.every((b) => b.data !== '')).toBe(true)
    // The OPA export writes the PDF into the archive; importing that archive brings it back.
    expect(back.attachments?.map((a) => a.attachment_id)).toEqual([pdf.attachment_id])
    const archive = exportOpa(back)
    const files = unzipSync(archive)
    const pdfPath = Object.keys(files).find(
      (f) => f.startsWith('session/attachments/') && f.endsWith('.pdf'),
    )!
    expect(new TextDecoder().decode(files[pdfPath]).startsWith('%PDF-1.4')).toBe(true)
    const again = await importTranscript(archive)
    expect(again.attachments.map((a) => [a.name, a.data.byteLength])).toEqual([[pdf.name, pdf.size]])
    await store.close()
  })

  it('a storage without attachment bytes keeps images inline and names the files in a warning', async () => {
    const base = memoryStorage()
    const { attachmentBytes: _dropped, ...storage } = base
    const store = await createStore({ storage, multiTab: false })
    const r = await importInto(store, fixture('claude-images.jsonl'))
    expect(r.warnings.map((w) => w.code)).toEqual(['attachments-not-stored'])
    await store.close()
  })
})

describe('importInto and foreign mime types', () => {
  it('an attachment or inline image whose type is no media type is stored as application/octet-stream, never failing the import', async () => {
    const { storageTree, MAIN, M } = await import('./fixtures/opencode.js')
    const files = storageTree()
    const part = (id: string, mime: string, url: string): string =>
      JSON.stringify({ id, sessionID: MAIN, messageID: M.u2, type: 'file', mime, filename: `${id}.bin`, url })
    files[`part/${M.u2}/prt_zz1.json`] = part(
      'prt_zz1',
      'text/plain\r\nX-Injected: 1',
      'data:text/plain;base64,aGk=',
    )
    files[`part/${M.u2}/prt_zz2.json`] = part('prt_zz2', 'image/*', 'data:image/png;base64,aGk=')
    const store = await open()
    const r = await importInto(store, files)
    expect(r.written.map((w) => w.session_id)).toContain(MAIN)
    const { attachments } = await store.listAttachments({ session_id: MAIN })
    const byName = new Map(attachments.map((a) => [a.name, a.mime]))
    expect(byName.get('prt_zz1.bin')).toBe('application/octet-stream')
    expect(attachments.filter((a) => a.mime === 'application/octet-stream').length).toBe(2)
    expect(attachments.some((a) => a.mime === 'image/png')).toBe(true)
    const blob = await store.getAttachmentBlob(
      MAIN,
      attachments.find((a) => a.name === 'prt_zz1.bin')!.attachment_id,
    )
    expect(await blob!.text()).toBe('hi')
  })
})
