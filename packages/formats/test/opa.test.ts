import { type SessionImport } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { strToU8, unzipSync, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { exportOpa, importTranscript, type ImportResult } from '../src/index.js'
import { codes, fixture, ofRole, pathIds } from './helpers.js'
import { liveArrayBuffers } from '../../../test/support/heap.js'

// OPA archives (seeds/000, spec §6): a ZIP with META-INF/MANIFEST.MF, prompt.md and
// session/history.json, attachments under session/attachments/. Archives here are built by
// the tests from the spec; no real one with a session history exists.

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
const pngBytes = (): Uint8Array => Uint8Array.from(atob(PNG), (c) => c.charCodeAt(0))
const json = (v: unknown): Uint8Array => strToU8(JSON.stringify(v, null, 2))

const MANIFEST =
  'Manifest-Version: 1.0\r\nOPA-Version: 0.1\r\nTitle: North region revi\r\n ew\r\nPrompt-File: prompt.md\r\nSession-File: session/history.json\r\nExecution-Mode: interactive\r\n\r\n'

const history = {
  opa_version: '0.1',
  session_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
  created_at: '2026-03-01T10:00:00Z',
  updated_at: '2026-03-01T10:05:00Z',
  messages: [
    { id: '1', role: 'system', content: 'You are a data analyst.', timestamp: '2026-03-01T10:00:00Z' },
    {
      id: '2',
      role: 'user',
      content: [
        { type: 'text', text: 'Review this chart and the report' },
        { type: 'image', source: { type: 'attachment', path: 'session/attachments/chart.png' } },
        { type: 'file', source: { type: 'attachment', path: 'session/attachments/report.pdf' } },
      ],
      timestamp: '2026-03-01T10:00:10Z',
    },
    {
      id: '3',
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me load the CSV.' },
        { type: 'tool_use', id: 'tu_1', name: 'read_csv', input: { path: 'data/north.csv' } },
      ],
      timestamp: '2026-03-01T10:00:20Z',
    },
    {
      id: '4',
      role: 'tool',
      content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'region,total\nnorth,42' }],
      timestamp: '2026-03-01T10:00:21Z',
    },
    {
      id: '5',
      role: 'assistant',
      content: [
        { type: 'text', text: 'North totals 42.' },
        { type: 'audio', url: 'x.wav' },
      ],
      timestamp: '2026-03-01T10:00:30Z',
    },
  ],
}

function archive(extra: Record<string, Uint8Array> = {}, h: unknown = history): Uint8Array {
  return zipSync({
    'META-INF/MANIFEST.MF': strToU8(MANIFEST),
    'prompt.md': strToU8('Continue the regional review.\n'),
    'session/history.json': json(h),
    'session/attachments/chart.png': pngBytes(),
    'session/attachments/report.pdf': strToU8('%PDF-1.4\n%%EOF\n'),
    'data/INDEX.json': json({ files: ['north.csv'] }),
    'data/north.csv': strToU8('region,total\nnorth,42\n'),
    ...extra,
  })
}

describe('OPA import', () => {
  it('reads the archive: manifest title, linear history, attachments as image and file blocks, tool results paired', async () => {
    const r = await importTranscript(archive())
    expect(r.format).toBe('opa')
    const s = r.sessions[0]
    expect(s.meta).toMatchObject({
      session_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
      title: 'North region review',
      created_at: Date.parse('2026-03-01T10:00:00Z'),
    })
    expect(pathIds(s)).toEqual(['1', '2', '3', '4', '5'])
    expect(s.entries[0]).toMatchObject({
      message: {
        role: 'custom',
        custom_type: 'system',
        content: [{ type: 'text', text: 'You are a data analyst.' }],
      },
    })
    const [text, image, file] = ofRole(s, 'user')[0].message.content
    expect(text).toEqual({ type: 'text', text: 'Review this chart and the report' })
    expect(image).toEqual({ type: 'image', mime: 'image/png', data: PNG })
    expect(file).toMatchObject({ type: 'file', name: 'report.pdf', mime: 'application/pdf', size: 15 })
    expect(r.attachments).toEqual([
      {
        session_id: s.meta.session_id,
        attachment_id: (file as { attachment_id: string }).attachment_id,
        name: 'report.pdf',
        mime: 'application/pdf',
        data: strToU8('%PDF-1.4\n%%EOF\n'),
      },
    ])
    expect(ofRole(s, 'function_result')[0].message).toMatchObject({
      function_call_id: 'tu_1',
      function_id: 'read_csv',
      content: [{ type: 'text', text: 'region,total\nnorth,42' }],
    })
    // An unknown block is read as text, as OPA's own parsers do, and said so.
    expect(ofRole(s, 'assistant')[1].message.content[1]).toEqual({
      type: 'text',
      text: '{"type":"audio","url":"x.wav"}',
    })
    expect(codes(r)).toEqual(['unknown-block'])
    expect(r.skipped).toEqual({ 'archive entry (prompt, data, signatures)': 3 })
  })

  it('a bare history.json cannot resolve attachments: they stay as text references, with a warning', async () => {
    const r = await importTranscript(JSON.stringify(history))
    const [, image, file] = ofRole(r.sessions[0], 'user')[0].message.content
    expect(image).toEqual({ type: 'text', text: '[image: session/attachments/chart.png]' })
    expect(file).toEqual({ type: 'text', text: '[file: session/attachments/report.pdf]' })
    expect(codes(r)).toEqual(['attachment-missing', 'attachment-missing', 'unknown-block'])
  })
})

/** The active path of a session, as core normalises it. */
function activePath(s: SessionImport): unknown[] {
  const c = checkImport(s)
  const byId = new Map(c.entries.map((e) => [e.id, e]))
  const out: unknown[] = []
  for (let id = c.active_leaf; id !== null; id = byId.get(id)!.parent_id) out.unshift(byId.get(id))
  return out
}

async function exportThenImport(
  r: ImportResult,
): Promise<{ back: ImportResult; files: Record<string, Uint8Array> }> {
  const bytes = exportOpa(r.sessions[0], { exportedAt: Date.UTC(2026, 2, 2) })
  return { back: await importTranscript(bytes), files: unzipSync(bytes) }
}

describe('OPA export', () => {
  it('writes the active path only; the manifest says how many branches were left out', async () => {
    const r = await importTranscript(fixture('claude-regenerate.jsonl'))
    const { back, files } = await exportThenImport(r)
    const manifest = new TextDecoder().decode(files['META-INF/MANIFEST.MF'])
    expect(manifest).toContain('OPA-Version: 0.1\r\n')
    expect(manifest).toContain('Session-File: session/history.json\r\n')
    expect(manifest).toContain('X-Colloquy-Branches-Omitted: 1\r\n')
    expect(manifest).toContain('X-Colloquy-Entries-Omitted: 1\r\n')
    expect(Object.keys(files).sort()).toEqual(['META-INF/MANIFEST.MF', 'prompt.md', 'session/history.json'])
    const h = JSON.parse(new TextDecoder().decode(files['session/history.json'])) as {
      messages: { id: string; role: string; content: unknown }[]
      metadata: unknown
    }
    expect(h.messages.map((m) => [m.id, m.role, m.content])).toEqual([
      ['u-1', 'user', 'Write a haiku about rain'],
      [
        'a-2',
        'assistant',
        'Grey clouds gather low,\nthe street holds its breath, then—\na thousand small bells.',
      ],
      ['u-2', 'user', 'Thanks, keep that one'],
      ['a-3', 'assistant', 'Glad you like it.'],
    ])
    expect(h.metadata).toMatchObject({ colloquy: { omitted_branches: 1, omitted_entries: 1 } })
    // Import gives back exactly the active path: same ids, parents and content.
    expect(activePath(back.sessions[0])).toEqual(activePath(r.sessions[0]))
    expect(back.sessions[0].meta.metadata).toMatchObject({ format: 'claude-code', opa_omitted_branches: 1 })
    expect(back.warnings).toEqual([])
  })

  it('images travel as archive attachments; thinking, calls, results and custom entries come back', async () => {
    for (const name of [
      'claude-images.jsonl',
      'claude-microcompact.jsonl',
      'gemini-rewind.jsonl',
      'codex-current.jsonl',
    ]) {
      const r = await importTranscript(fixture(name))
      const { back, files } = await exportThenImport(r)
      expect(activePath(back.sessions[0])).toEqual(activePath(r.sessions[0]))
      if (name === 'claude-images.jsonl') {
        expect(Object.keys(files).filter((f) => f.startsWith('session/attachments/'))).toEqual([
          'session/attachments/1.png',
          'session/attachments/2.png',
        ])
        expect(files['session/attachments/1.png']).toEqual(pngBytes())
      }
    }
  })

  it('an OPA reader that ignores the Colloquy metadata still gets plain OPA messages', async () => {
    const r = await importTranscript(fixture('claude-rewind.jsonl'))
    const bytes = exportOpa(r.sessions[0])
    const h = JSON.parse(new TextDecoder().decode(unzipSync(bytes)['session/history.json'])) as {
      messages: { role: string; content: unknown; metadata?: unknown }[]
    }
    for (const m of h.messages) delete m.metadata
    const plain = await importTranscript(JSON.stringify(h))
    const s = plain.sessions[0]
    expect(s.entries.map((e) => (e.kind === 'message' ? e.message.role : e.kind))).toEqual([
      'user',
      'assistant',
      'function_result',
      'assistant',
      'user',
      'assistant',
    ])
    expect(ofRole(s, 'function_result')[0].message).toMatchObject({
      function_call_id: 'toolu_ls',
      function_id: 'Bash',
      content: [{ type: 'text', text: 'a.log\nb.log' }],
    })
    expect(plain.warnings).toEqual([])
  })
})

describe('unsafe archives are refused before anything is inflated', () => {
  it('an entry whose path climbs out with ../', async () => {
    await expect(
      importTranscript(archive({ '../../etc/cron.d/evil': strToU8('* * * * * root sh') })),
    ).rejects.toThrow(/format\/unsafe_archive: archive entry "..\/..\/etc\/cron.d\/evil" has an unsafe path/)
  })

  it('an absolute entry path', async () => {
    await expect(importTranscript(archive({ '/tmp/evil': strToU8('x') }))).rejects.toThrow(
      /format\/unsafe_archive/,
    )
  })

  it('an attachment reference that climbs out of the archive', async () => {
    const h = {
      ...history,
      messages: [
        {
          id: '1',
          role: 'user',
          content: [{ type: 'image', source: { type: 'attachment', path: 'session/../../secret.png' } }],
        },
      ],
    }
    await expect(importTranscript(archive({}, h))).rejects.toThrow(
      /format\/unsafe_archive: attachment path "session\/..\/..\/secret.png" is unsafe/,
    )
  })

  it('a ZIP bomb (an entry that expands over 500:1) is refused without inflating it', async () => {
    const zeros = new Uint8Array(16 * 1024 * 1024)
    const bomb = zipSync(
      { 'META-INF/MANIFEST.MF': strToU8(MANIFEST), 'session/history.json': zeros },
      { level: 9 },
    )
    expect(bomb.byteLength).toBeLessThan(zeros.byteLength / 500)
    await expect(importTranscript(bomb, { format: 'opa' })).rejects.toThrow(
      /format\/unsafe_archive: archive entry session\/history.json expands \d+:1 \(a ZIP bomb\?\)/,
    )
  })

  it('a header that lies about its size (claims ~2 GB) is refused before any buffer is allocated', async () => {
    const bytes = archive()
    // Patch the central directory's uncompressed size of session/history.json to ~2 GB.
    const name = strToU8('session/history.json')
    for (let i = 0; i < bytes.length - 46; i++) {
      if (bytes[i] === 0x50 && bytes[i + 1] === 0x4b && bytes[i + 2] === 1 && bytes[i + 3] === 2) {
        const len = bytes[i + 28] | (bytes[i + 29] << 8)
        if (len === name.length && name.every((c, k) => bytes[i + 46 + k] === c))
          new DataView(bytes.buffer).setUint32(i + 24, 0x7fff0000, true)
      }
    }
    const before = liveArrayBuffers()
    await expect(importTranscript(bytes)).rejects.toThrow(
      /format\/unsafe_archive: archive entry session\/history.json expands \d+:1/,
    )
    expect(liveArrayBuffers() - before).toBeLessThan(64 * 1024 * 1024)
  })

  it('entries that expand past maxBytes in total are refused', async () => {
    const long = { ...history, messages: [{ id: '1', role: 'user', content: 'north '.repeat(20_000) }] }
    const bytes = archive({}, long)
    expect(bytes.byteLength).toBeLessThan(20 * 1024)
    await expect(importTranscript(bytes, { maxBytes: 20 * 1024 })).rejects.toThrow(
      'format/too_large: the archive expands to more than 20.0 KB (raise maxBytes to import it)',
    )
  })

  it('an archive with more entries than allowed', async () => {
    const many: Record<string, Uint8Array> = {}
    for (let i = 0; i < 10_001; i++) many[`data/f${i}.txt`] = new Uint8Array(0)
    await expect(importTranscript(archive(many))).rejects.toThrow(
      /format\/unsafe_archive: the archive has more than 10000 entries/,
    )
  })

  it('an archive without a session history says what it holds', async () => {
    const bytes = zipSync({ 'META-INF/MANIFEST.MF': strToU8(MANIFEST), 'prompt.md': strToU8('Do it.') })
    await expect(importTranscript(bytes)).rejects.toThrow(
      'format/invalid: the archive has no session history (session/history.json); 2 entries: META-INF/MANIFEST.MF, prompt.md',
    )
  })
})
