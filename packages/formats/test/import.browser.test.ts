/// <reference types="vite/client" />
import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import wasmUrl from 'sql.js/dist/sql-wasm-browser.wasm?url'
import { afterEach, describe, expect, it } from 'vitest'
import {
  detectFormat,
  exportOpa,
  exportUnified,
  importInto,
  importTranscript,
  readSession,
  type Progress,
} from '../src/index.js'
import rewind from './fixtures/claude-rewind.jsonl?raw'
import images from './fixtures/claude-images.jsonl?raw'
import gemini from './fixtures/gemini-rewind.jsonl?raw'
import { DB, openCodeDb } from './fixtures/opencode.js'

// The same importers in headless Chromium: browser Files and Blobs read as streams, real
// IndexedDB underneath, sql.js fetching its wasm from a URL the caller gives.

const names: string[] = []
const stores: Store[] = []
const open = async (name = `formats-${Date.now()}-${names.length}`): Promise<Store> => {
  names.push(name)
  const s = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
  stores.push(s)
  return s
}
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
  for (const n of names.splice(0)) indexedDB.deleteDatabase(n)
})

describe('formats in Chromium', () => {
  it('a File picked by the user: detected from its bytes, read as a stream with progress, written to IndexedDB', async () => {
    const file = new File([rewind], 'session.jsonl', { type: 'application/jsonl' })
    expect(await detectFormat(file)).toBe('claude-code')
    const store = await open()
    const progress: Progress[] = []
    const r = await importInto(store, file, { onProgress: (p) => progress.push(p) })
    expect(r.written).toEqual([{ session_id: 'sess-rewind', entries: 10 }])
    expect(progress.filter((p) => p.phase === 'read').at(-1)).toEqual({
      phase: 'read',
      done: file.size,
      total: file.size,
    })
    expect(progress.at(-1)).toEqual({ phase: 'write', done: 10, total: 10 })
    const { messages } = await store.messages({ session_id: 'sess-rewind' })
    expect(messages.map((m) => m.entry_id)).toEqual(['u-1', 'a-1', 'r-1', 'a-3', 'u-3', 'a-6'])
  })

  it('a session survives a reload of the store with every branch', async () => {
    const name = `formats-reload-${Date.now()}`
    const first = await open(name)
    await importInto(first, new Blob([gemini]))
    await first.close()
    const again = await open(name)
    const s = await readSession(again, '7d1c4b2a-0e9f-4c3d-8b7a-6f5e4d3c2b1a')
    expect(s.entries).toHaveLength(11)
    expect(s.active_leaf).toBe('i1')
    // Exported from the store and imported again: the same tree.
    const back = (await importTranscript(exportUnified(s))).sessions[0]
    expect(back.entries.map((e) => [e.id, e.parent_id]).sort()).toEqual(
      s.entries.map((e) => [e.id, e.parent_id]).sort(),
    )
  })

  it('an OPA archive made in the page imports back to the active path, images included', async () => {
    const [s] = (await importTranscript(images)).sessions
    const opa = new Blob([exportOpa(s)])
    const back = await importTranscript(opa)
    expect(back.format).toBe('opa')
    expect(back.sessions[0].entries.map((e) => e.id)).toEqual(['u-1', 'a-1', 'r-1', 'a-4', 'u-2', 'a-5'])
    const first = back.sessions[0].entries[0]
    expect(first.kind === 'message' && first.message.content[1]).toMatchObject({
      type: 'image',
      mime: 'image/png',
    })
  })

  it('an OpenCode SQLite database through sql.js, its wasm located by the caller', async () => {
    const bytes = await openCodeDb({ locateFile: () => wasmUrl })
    const store = await open()
    const r = await importInto(store, new File([bytes.slice().buffer as ArrayBuffer], 'opencode.db'), {
      sqlite: { locateFile: () => wasmUrl },
    })
    expect(r.format).toBe('opencode')
    expect(r.written.map((w) => w.session_id)).toEqual([DB.main, DB.child, DB.reverted])
    const main = await readSession(store, DB.main)
    expect(main.entries).toHaveLength(11)
  })
})
