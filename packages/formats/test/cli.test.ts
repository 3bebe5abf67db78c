import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SessionEntry, SessionImport } from '@colloquy/core'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../src/cli-run.js'
import { nodeSqlite } from '../src/node.js'
import { importTranscript } from '../src/index.js'
import type { SessionSummary } from '../src/session/inspect.js'
import { readPath } from '../src/node.js'
import { SAMPLES } from './helpers.js'
import { openCodeDb } from './fixtures/opencode.js'

// The CLI, run in-process (src/cli.ts only calls runCli and exits with its code).

const dir = mkdtempSync(join(tmpdir(), 'formats-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const samplePath = (rel: string): string => fileURLToPath(new URL(rel, SAMPLES))
const fixturePath = (name: string): string => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url))

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await runCli(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t) })
  return { code, out, err }
}

describe('colloquy-formats CLI', () => {
  it('inspect prints format, sessions, entries, branches and warnings', async () => {
    const r = await cli(
      'inspect',
      samplePath('claude-code/entire_cc-2.1.7_fork-after-exit-resume.head.jsonl'),
    )
    expect(r.code).toBe(0)
    expect(r.out).toContain('format: claude-code\nsessions: 1\n')
    expect(r.out).toContain('entries 29 (messages 29), branches 2, forks 1, active path 26')
    expect(r.out).toContain('warnings: 2\n  [unpaired-call] tool call toolu_0122tJDARWgyiVyhXGrH9TWv (Read)')
    expect(r.out).toContain(
      'skipped on purpose: file-history-snapshot ×4, system/stop_hook_summary ×3, system/turn_duration ×2',
    )
  })

  it('inspect --json is machine-readable', async () => {
    const r = await cli(
      'inspect',
      samplePath('claude-code/claude-code-viewer_cc-1.0.108_inline-sidechains.jsonl'),
      '--json',
    )
    const doc = JSON.parse(r.out) as { format: string; sessions: { entries: number }[]; warnings: unknown[] }
    expect(doc.format).toBe('claude-code')
    expect(doc.sessions.map((s) => s.entries)).toEqual([25, 6, 14])
    expect(doc.warnings).toEqual([])
  })

  it('inspect reads an OpenCode database from disk (sql.js wasm loaded from the installed package)', async () => {
    const path = join(dir, 'opencode.db')
    writeFileSync(path, await openCodeDb(await nodeSqlite()))
    const r = await cli('inspect', path)
    expect(r.code).toBe(0)
    expect(r.out).toContain('format: opencode\nsessions: 3\n')
    expect(r.out).toContain('entries 11 (messages 11), branches 2, forks 1, active path 7')
  })

  it('convert --to unified writes NDJSON for several sessions that imports back', async () => {
    const out = join(dir, 'sidechains.ndjson')
    const r = await cli(
      'convert',
      samplePath('claude-code/claude-code-viewer_cc-1.0.108_inline-sidechains.jsonl'),
      '--to',
      'unified',
      '--out',
      out,
    )
    expect(r.code).toBe(0)
    const text = readFileSync(out, 'utf8')
    expect(text.trimEnd().split('\n')).toHaveLength(3)
    const back = await importTranscript(text)
    expect(back.sessions.map((s) => s.entries.length)).toEqual([25, 6, 14])
  })

  it('convert --to chatgpt writes a conversations.json that imports back with its forks', async () => {
    const out = join(dir, 'conversations.json')
    const r = await cli(
      'convert',
      samplePath('chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json'),
      '--to',
      'chatgpt',
      '--out',
      out,
    )
    expect(r.code).toBe(0)
    const back = await importTranscript(new Uint8Array(readFileSync(out)))
    expect(back.format).toBe('chatgpt')
    expect(back.sessions[0].entries).toHaveLength(13)
    expect(back.sessions[0].active_leaf).toBe('f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8')
  })

  it('convert --to opa writes an archive of the active path', async () => {
    const out = join(dir, 'regen.opa')
    const r = await cli('convert', fixturePath('claude-regenerate.jsonl'), '--to', 'opa', '--out', out)
    expect(r.code).toBe(0)
    expect(r.err).toContain(`wrote ${out} (sess-regen)`)
    const back = await importTranscript(new Uint8Array(readFileSync(out)))
    expect(back.format).toBe('opa')
    expect(back.sessions[0].entries.map((e) => e.id)).toEqual(['u-1', 'a-2', 'u-2', 'a-3'])
  })

  it('fails with exit code 1 and a clear message on input it cannot read, 2 on bad usage', async () => {
    const bad = join(dir, 'notes.txt')
    writeFileSync(bad, 'shopping list: milk, eggs\n')
    const r = await cli('inspect', bad)
    expect(r).toMatchObject({ code: 1, out: '' })
    expect(r.err).toMatch(/^colloquy-formats: format\/unknown: not a transcript this package reads/)
    expect((await cli('convert', bad)).code).toBe(1)
    expect((await cli('convert', fixturePath('claude-regenerate.jsonl'))).code).toBe(2)
    expect((await cli()).code).toBe(2)
  })
})

describe('every format the CLI writes, it reads back', () => {
  // Inputs on disk, read as the CLI reads them (disk-backed Blobs, so heads are bytes): a real
  // Claude project with six sub-agent files (7 sessions; its first session's unified line is
  // 234 KB with multi-byte text in its first 64 KB), and one real session with a fork.
  const inputs = {
    'seven sessions': samplePath('claude-code/claude-code-log_cc-2.1.114_subagents-dir'),
    'one session': samplePath('claude-code/claude-code-log_cc-2.1.42_rewind-edit-fork.jsonl'),
  }
  const inspect = async (path: string): Promise<{ format: string; sessions: SessionSummary[] }> => {
    const r = await cli('inspect', path, '--json')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    return JSON.parse(r.out) as { format: string; sessions: SessionSummary[] }
  }
  const writers = ['unified', 'opa', 'chatgpt', 'claude-ai', 'open-webui'] as const

  for (const [label, input] of Object.entries(inputs)) {
    for (const to of writers) {
      it(`${label}: --to ${to} is read back by inspect and convert`, async () => {
        const original = await importTranscript(await readPath(input), { sqlite: await nodeSqlite() })
        const ids = original.sessions.map((s) => s.meta.session_id)
        const out = join(dir, `${label.replace(' ', '-')}-${to}`)
        mkdirSync(out, { recursive: true })
        const first = join(out, to === 'opa' ? 'x.opa' : 'x.json')
        const r = await cli('convert', input, '--to', to, '--out', first)
        expect(r.code).toBe(0)
        // OPA holds one session per archive: the CLI names each file it wrote.
        const written = to === 'opa' ? [...r.err.matchAll(/^wrote (\S+) /gm)].map((m) => m[1]) : [first]
        expect(written).toHaveLength(to === 'opa' ? ids.length : 1)
        const read = []
        for (const file of written) read.push(await inspect(file))
        expect(read.map((x) => x.format)).toEqual(written.map(() => to))
        expect(read.flatMap((x) => x.sessions.map((s) => s.session_id))).toEqual(ids)
        if (to === 'unified') {
          // Lossless: the very entries (written parents first) and active leaves of the original.
          const back = await importTranscript(await readPath(first))
          const byId = (s: SessionImport): SessionEntry[] =>
            [...s.entries].sort((a, b) => (a.id < b.id ? -1 : 1))
          expect(back.sessions.map(byId)).toEqual(original.sessions.map(byId))
          expect(back.sessions.map((s) => s.active_leaf)).toEqual(original.sessions.map((s) => s.active_leaf))
        }
        // What it wrote converts again, to the same shape, and says the same.
        const again = join(out, to === 'opa' ? 'again.opa' : 'again.json')
        const r2 = await cli('convert', written[0], '--to', to, '--out', again)
        expect(r2.code).toBe(0)
        expect((await inspect(again)).sessions).toEqual(read[0].sessions)
      })
    }
  }
})
