// The server README's table of RPC request bodies names exactly the fields core's request
// validators read, required ones without `?`: the table cannot drift from what the server checks.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { requestParsers } from '../../packages/core/src/validation/requests.js'
import { fieldsOf } from '../../packages/core/src/validation/record-parsers.js'
import { searchRequestSchema } from '../../packages/core/src/validation/search-request.js'
import type { Parser } from '../../packages/core/src/validation/validate.js'
import { RPC_FUNCTION_IDS } from '../../packages/server/src/http/rpc.js'
import { ROOT } from './readme-blocks.js'

/** `| \`session::x\` | \`a\`, \`b?\` (notes \`c\`) |` → { session::x: ['a', 'b?'] }: the top-level backquoted names. */
function documentedBodies(): Map<string, string[]> {
  const readme = readFileSync(join(ROOT, 'packages/server/README.md'), 'utf8')
  const table = new Map<string, string[]>()
  // The rows of the table headed `| function | body |`, up to its end (other tables name functions too).
  const lines = readme.split('\n')
  const start = lines.indexOf('| function | body |')
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const row = /^\| `(session::[a-z:-]+)` \| (.*) \|$/.exec(line)
    if (!row) continue
    // Names inside parentheses describe a value (`context?` (`{ session_id?, … }`)), not the body.
    let depth = 0
    let top = ''
    for (const ch of row[2]) {
      if (ch === '(') depth++
      if (depth === 0) top += ch
      if (ch === ')') depth--
    }
    table.set(
      row[1],
      [...top.matchAll(/`([a-z_]+\??)`/g)].map((m) => m[1]),
    )
  }
  return table
}

describe('server README: RPC request bodies', () => {
  const table = documentedBodies()

  /** Every function `/rpc/:fn` answers, with the validator of its request. */
  const parsers: Record<string, Parser<unknown>> = {
    ...requestParsers,
    'session::search': searchRequestSchema,
  }

  it('lists every function the route answers', () => {
    expect([...table.keys()].sort()).toEqual([...RPC_FUNCTION_IDS].sort())
  })

  it.each([...RPC_FUNCTION_IDS])('%s: the fields its validator reads', (fn) => {
    const fields = fieldsOf(parsers[fn])
    expect(fields, `${fn} is not an object schema`).toBeDefined()
    const expected = fields!.map((f) => (f.required ? f.name : `${f.name}?`))
    expect(table.get(fn)).toEqual(expected)
  })
})
