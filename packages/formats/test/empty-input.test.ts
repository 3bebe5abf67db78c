import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../src/cli-run.js'
import { FormatError, importTranscript, type FormatId } from '../src/index.js'
import { readPath } from '../src/node.js'
import { codes, SAMPLES } from './helpers.js'

// A 0-byte session file (Claude Code leaves one when a session never got a message: the real
// flat-agent sample folder holds one) is said to be empty, the same way in every format, the
// API and the CLI: a single input is refused with `format/empty`; in a folder it is skipped
// with an `empty-file` warning.

const dir = mkdtempSync(join(tmpdir(), 'formats-empty-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await runCli(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t) })
  return { code, out, err }
}

const refusal = async (
  input: Parameters<typeof importTranscript>[0],
  format?: FormatId,
): Promise<FormatError> => {
  const e = await importTranscript(input, format ? { format } : {}).catch((x: unknown) => x)
  expect(e).toBeInstanceOf(FormatError)
  return e as FormatError
}

describe('an empty input', () => {
  it('is format/empty whatever it comes as, and whatever format is named', async () => {
    const emptyStream = new ReadableStream<Uint8Array>({ start: (c) => c.close() })
    for (const input of ['', new Uint8Array(0), new ArrayBuffer(0), new Blob([]), emptyStream]) {
      const e = await refusal(input)
      expect(e.code).toBe('format/empty')
      expect(e.message).toBe('format/empty: the input is empty (0 bytes): there is no transcript in it')
    }
    for (const format of [
      'claude-code',
      'codex',
      'gemini',
      'opencode',
      'unified',
      'opa',
      'chatgpt',
      'claude-ai',
      'open-webui',
    ] as const) {
      expect((await refusal(new Uint8Array(0), format)).code).toBe('format/empty')
    }
    expect((await refusal('\uFEFF \n\n')).message).toBe(
      'format/empty: the input holds only white space: there is no transcript in it',
    )
  })

  it('the real 0-byte session file of Claude Code 2.0.28: format/empty from the API and the CLI (exit 1)', async () => {
    const path = fileURLToPath(
      new URL(
        'claude-code/claude-code-log_cc-2.0.28_flat-agent-files/7864f562-717b-4d70-a1cb-b588f7826a1a.jsonl',
        SAMPLES,
      ),
    )
    expect((await refusal(await readPath(path))).code).toBe('format/empty')
    for (const argv of [
      ['inspect', path],
      ['convert', path, '--to', 'unified'],
    ]) {
      const r = await cli(...argv)
      expect(r).toMatchObject({ code: 1, out: '' })
      expect(r.err).toBe(
        'colloquy-formats: format/empty: the input is empty (0 bytes): there is no transcript in it\n',
      )
    }
  })

  it('in a folder, an empty file is skipped with a warning, in any format; a folder of empty files is format/empty', async () => {
    const gemini = `${JSON.stringify({ sessionId: 'g', projectHash: 'a'.repeat(64), startTime: '2026-04-20T10:00:00Z', lastUpdated: '2026-04-20T10:00:00Z', kind: 'main' })}\n${JSON.stringify({ id: 'u', timestamp: '2026-04-20T10:00:01Z', type: 'user', content: 'hi' })}\n`
    const r = await importTranscript({
      'chats/session-a.jsonl': gemini,
      'chats/session-b.jsonl': new Uint8Array(0),
    })
    expect(r.format).toBe('gemini')
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual(['g'])
    expect(codes(r)).toEqual(['empty-file'])
    expect(r.warnings[0]).toMatchObject({
      file: 'chats/session-b.jsonl',
      message: 'chats/session-b.jsonl is empty (0 bytes); skipped',
    })
    expect((await refusal({ 'a.jsonl': '', 'b.json': new Blob([]) })).message).toBe(
      'format/empty: every file of the folder is empty (0 bytes): there is no transcript in it',
    )
    expect((await refusal({})).message).toBe(
      'format/empty: the folder holds no file: there is no transcript in it',
    )
    // The same through the CLI, from disk.
    const folder = join(dir, 'chats')
    mkdirSync(folder)
    writeFileSync(join(folder, 'session-b.jsonl'), '')
    const empty = await cli('inspect', folder)
    expect(empty).toMatchObject({
      code: 1,
      err: 'colloquy-formats: format/empty: every file of the folder is empty (0 bytes): there is no transcript in it\n',
    })
    writeFileSync(join(folder, 'session-a.jsonl'), gemini)
    const one = await cli('inspect', folder)
    expect(one.code).toBe(0)
    expect(one.out).toContain('format: gemini\nsessions: 1\n')
    expect(one.out).toContain('  [empty-file] session-b.jsonl is empty (0 bytes); skipped')
  })
})
