import { closeSync, mkdtempSync, openAsBlob, openSync, rmSync, ftruncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import { strToU8, zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { detectFormat, FormatError, importInto, importTranscript } from '../src/index.js'
import { codes, fixtureText, sample, sampleText } from './helpers.js'
import { liveHeap } from '../../../test/support/heap.js'

// Broken, foreign and hostile inputs: a clear error or warning, bounded memory, and never a
// partial session in the store.

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
const emptyStore = (): Promise<Store> => createStore({ storage: memoryStorage(), multiTab: false })
const listed = async (store: Store): Promise<string[]> =>
  (await store.list({})).sessions.map((s) => s.session_id)

describe('truncated JSON lines', () => {
  it('Claude Code: a half-written last line is reported by number; the rest imports', async () => {
    const text = sampleText('claude-code/entire_cc-2.1.7_parallel-tools-task-subagent.jsonl')
    const cut = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 200)
    const r = await importTranscript(cut)
    expect(r.warnings.filter((w) => w.code === 'bad-line')).toEqual([
      { code: 'bad-line', message: 'line 16 is not valid JSON (truncated or corrupted); skipped', line: 16 },
    ])
    // Line 16 was the text block of the last message; its thinking (line 15) is still there.
    const last = r.sessions[0].entries.at(-1)!
    expect(last.kind === 'message' && last.message.content.map((b) => b.type)).toEqual(['thinking'])
    expect(r.sessions[0].entries).toHaveLength(8)
  })

  it('Codex and Gemini JSONL: a corrupted line in the middle is skipped with its number', async () => {
    const codex = fixtureText('codex-legacy.jsonl').split('\n')
    codex[6] = codex[6].slice(0, 40)
    const c = await importTranscript(codex.join('\n'))
    expect(c.warnings).toEqual([
      { code: 'bad-line', message: 'line 7 is not valid JSON (truncated or corrupted); skipped', line: 7 },
    ])
    expect(c.sessions[0].entries).toHaveLength(6)
    const gemini = fixtureText('gemini-rewind.jsonl').split('\n')
    gemini[5] = '{"id":"u2","timest'
    const g = await importTranscript(gemini.join('\n'))
    expect(codes(g)).toEqual(['bad-line'])
    expect(g.warnings[0].line).toBe(6)
  })

  it('a truncated JSON document (unified .json, Gemini .json) is a clear error, not a partial session', async () => {
    const unified = sampleText('unified-agent-history/agent-history_unified-schema-1.0_doc-example.json')
    await expect(importTranscript(unified.slice(0, 900))).rejects.toThrow(/^format\/invalid: not valid JSON/)
    const gemini = sampleText('gemini/entire_gemini-cli-0.23_session.json')
    await expect(importTranscript(gemini.slice(0, gemini.length / 2))).rejects.toThrow(
      /^format\/invalid: not valid JSON/,
    )
  })

  it('thousands of broken lines keep a bounded warning list', async () => {
    const text = Array.from({ length: 5000 }, (_, i) => `{"type":"user","uuid":"x${i}",`).join('\n')
    const r = await importTranscript(text, { format: 'claude-code' })
    // 50 kept one by one, one summary for the other 4950, and no session at all.
    expect(r.warnings.filter((w) => w.code === 'bad-line')).toHaveLength(51)
    expect(r.warnings.at(-1)).toEqual({ code: 'bad-line', message: '4950 more bad-line warnings not listed' })
    expect(codes(r).filter((c) => c !== 'bad-line')).toEqual(['empty'])
  })
})

describe('wrong formats', () => {
  it('a format option that is not one of FORMATS is refused, even a name every object has', async () => {
    for (const format of ['constructor', '__proto__', 'toString', 'pdf']) {
      const err = await importTranscript('{"type":"user"}\n', { format: format as never }).catch(
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(FormatError)
      expect((err as FormatError).code).toBe('format/unknown')
    }
  })

  it('bytes that are no transcript are refused by detection', async () => {
    const png = Uint8Array.from(
      atob(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      ),
      (c) => c.charCodeAt(0),
    )
    for (const input of [png, 'just some notes\nnothing here\n', '{"hello":"world"}', '[1,2,3]']) {
      expect(await detectFormat(input)).toBeNull()
      const err = await importTranscript(input).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(FormatError)
      expect((err as FormatError).code).toBe('format/unknown')
    }
  })

  it('a ZIP that is not an OPA archive says what it holds', async () => {
    const zip = zipSync({ 'README.md': strToU8('# hi') })
    await expect(importTranscript(zip)).rejects.toThrow(
      'format/invalid: the archive has no session history (session/history.json); 1 entries: README.md',
    )
  })

  it('a Codex file read as Claude Code (forced) yields no session and says why', async () => {
    const r = await importTranscript(sample('codex/lparlett_codex-vscode-0.61.1_sanitized.jsonl'), {
      format: 'claude-code',
    })
    expect(r.sessions).toEqual([])
    expect(new Set(codes(r))).toEqual(new Set(['unknown-line', 'empty']))
  })
})

describe('a 500 MB input', () => {
  it('a 500 MB file is refused before it is read (default limit 256 MB)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'formats-big-'))
    dirs.push(dir)
    const path = join(dir, 'huge.jsonl')
    const fd = openSync(path, 'w')
    ftruncateSync(fd, 500 * 1024 * 1024)
    closeSync(fd)
    const blob = await openAsBlob(path)
    expect(blob.size).toBe(500 * 1024 * 1024)
    const heap = liveHeap()
    await expect(importTranscript(blob, { format: 'claude-code' })).rejects.toThrow(
      'format/too_large: input is 500.0 MB, over the 256.0 MB limit (raise maxBytes to import it)',
    )
    expect(liveHeap() - heap).toBeLessThan(32 * 1024 * 1024)
    const store = await emptyStore()
    await expect(importInto(store, blob, { format: 'claude-code' })).rejects.toThrow(/format\/too_large/)
    expect(await listed(store)).toEqual([])
  })

  it('a 500 MB stream of unknown length stops at the limit with bounded memory', async () => {
    // Valid JSONL that imports to nothing (queued-input bookkeeping): only the reader's memory counts.
    const line = strToU8(
      `${JSON.stringify({ type: 'queue-operation', operation: 'enqueue', content: 'x'.repeat(4000), sessionId: 's', timestamp: '2026-01-01T00:00:00Z' })}\n`,
    )
    const chunk = new Uint8Array(line.length * 256)
    for (let i = 0; i < 256; i++) chunk.set(line, i * line.length)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 500 * 1024 * 1024) return c.close()
        sent += chunk.byteLength
        c.enqueue(chunk.slice())
      },
    })
    let peak = 0
    const base = liveHeap()
    const err = await importTranscript(stream, {
      onProgress: (p) => {
        if (p.done % (32 << 20) < chunk.byteLength) peak = Math.max(peak, liveHeap() - base)
      },
    }).catch((e: unknown) => e)
    expect(String(err)).toMatch(
      /^FormatError: format\/too_large: input is 256\.\d MB, over the 256\.0 MB limit/,
    )
    expect(sent).toBeLessThan(300 * 1024 * 1024)
    expect(peak).toBeLessThan(96 * 1024 * 1024)
  }, 60_000)

  it('a single line longer than maxLineBytes is a clear error', async () => {
    const text = `{"type":"user","message":{"content":"${'y'.repeat(2 * 1024 * 1024)}"}}\n`
    await expect(
      importTranscript(text, { format: 'claude-code', maxLineBytes: 1024 * 1024 }),
    ).rejects.toThrow('format/too_large: line 1 is longer than 1.0 MB (raise maxLineBytes to import it)')
  })
})
