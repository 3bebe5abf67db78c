// The CLI's logic, separate from the bin so tests can run it in-process.
import { writeFile } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import { parseArgs } from 'node:util'
import { FORMATS, type FormatId, type ImportResult } from './types.js'
import { importTranscript } from './import/transcript.js'
import { summarize } from './session/inspect.js'
import { EXPORTERS } from './export/exporters.js'
import { nodeSqlite, readPath } from './node.js'

const USAGE = `usage:
  colloquy-formats convert <input> --to ${EXPORTERS.map((e) => e.id).join('|')} [--out file] [--format <id>] [--max-mb <n>]
  colloquy-formats inspect <input> [--json] [--format <id>] [--max-mb <n>]

<input> is a transcript file, or a directory (an OpenCode storage/ tree, a Claude project).
formats: ${FORMATS.join(', ')}`

function report(r: ImportResult): string {
  const lines = [`format: ${r.format}`, `sessions: ${r.sessions.length}`]
  for (const s of r.sessions) {
    const x = summarize(s)
    lines.push(`  ${x.session_id}  ${JSON.stringify(x.title)}`)
    lines.push(
      `    entries ${x.entries} (messages ${x.messages}), branches ${x.branches}, forks ${x.forks}, active path ${x.active_path}`,
    )
    lines.push(
      `    roles ${Object.entries(x.by_role)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    )
    if (x.models.length)
      lines.push(
        `    models ${x.models.join(', ')}; tokens in ${x.usage.input} out ${x.usage.output} cache read ${x.usage.cache_read} write ${x.usage.cache_write}`,
      )
  }
  lines.push(`warnings: ${r.warnings.length}`)
  for (const w of r.warnings) lines.push(`  [${w.code}] ${w.message}`)
  const skipped = Object.entries(r.skipped)
  if (skipped.length) lines.push(`skipped on purpose: ${skipped.map(([k, n]) => `${k} ×${n}`).join(', ')}`)
  if (r.attachments.length) lines.push(`attachments: ${r.attachments.length}`)
  return lines.join('\n')
}

export interface CliIo {
  stdout(text: string): void
  stderr(text: string): void
}

const processIo: CliIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
}

/** Runs one command line; resolves to the exit code (0 ok, 1 failed import, 2 usage). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    return await run(argv, io)
  } catch (e) {
    io.stderr(`colloquy-formats: ${e instanceof Error ? e.message : String(e)}\n`)
    return 1
  }
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean' },
      'max-mb': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const [command, input] = positionals
  if (values.help || !command || !input || !['convert', 'inspect'].includes(command)) {
    io.stderr(`${USAGE}\n`)
    return values.help ? 0 : 2
  }
  if (values.format && !FORMATS.includes(values.format as FormatId))
    throw new Error(`unknown --format ${values.format}`)
  const result = await importTranscript(await readPath(input), {
    ...(values.format && { format: values.format as FormatId }),
    ...(values['max-mb'] && { maxBytes: Number(values['max-mb']) * 1024 * 1024 }),
    sqlite: await nodeSqlite(),
  })
  if (command === 'inspect') {
    io.stdout(
      values.json
        ? `${JSON.stringify({ format: result.format, sessions: result.sessions.map(summarize), warnings: result.warnings, skipped: result.skipped }, null, 2)}\n`
        : `${report(result)}\n`,
    )
    return 0
  }
  const exporter = EXPORTERS.find((e) => e.id === values.to)
  if (exporter?.multi) {
    // One JSON document (unified: NDJSON for several sessions) holding every session.
    const text = exporter.write(result.sessions)
    if (values.out) await writeFile(values.out, text)
    else io.stdout(typeof text === 'string' ? text : new TextDecoder().decode(text))
  } else if (exporter) {
    const ext = `.${exporter.extension}`
    const base = values.out ?? `${basename(input, extname(input))}${ext}`
    const stem = base.endsWith(ext) ? base.slice(0, -ext.length) : base
    for (const [i, s] of result.sessions.entries()) {
      // OPA holds one linear session: sub-agent sessions get their own archives.
      const file = i === 0 ? `${stem}${ext}` : `${stem}.${i + 1}${ext}`
      await writeFile(file, exporter.write(s))
      io.stderr(`wrote ${file} (${s.meta.session_id})\n`)
    }
  } else {
    io.stderr(`convert needs --to ${EXPORTERS.map((e) => e.id).join(', ')}\n${USAGE}\n`)
    return 2
  }
  for (const w of result.warnings) io.stderr(`warning [${w.code}] ${w.message}\n`)
  return 0
}
