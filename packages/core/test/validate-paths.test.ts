import { describe, expect, it } from 'vitest'
import { parseRequest } from '../src/wire.js'
import { parseAgentMessage } from '../src/wire.js'

// The validator builds each field's path once per place it meets a schema (a schema keeps the
// paths of the last place it saw): an error must still name the place of the value that failed,
// whatever places the same schema was used at before, nested in itself included.

const text = (t: unknown) => ({ type: 'text', text: t })
const user = (...content: unknown[]) => ({ role: 'user', content, timestamp: 1 })
const errorOf = (run: () => unknown): string => {
  try {
    run()
  } catch (e) {
    expect((e as { code?: string }).code).toBe('session/invalid_request')
    return (e as Error).message
  }
  throw new Error('expected a refusal')
}

describe('validator error paths', () => {
  it('name the failing place after the same schemas passed at other places', () => {
    // Many good values at one place first, as a burst of appends does.
    for (let i = 0; i < 50; i++)
      parseRequest('session::append', { session_id: 's', message: user(text('ok')) })
    expect(
      errorOf(() => parseRequest('session::append', { session_id: 's', message: user(text('ok'), text(7)) })),
    ).toMatch(/^session\/invalid_request: message\.content\[1\]\.text: expected a string/)
    // The same message schemas under another parent path, at several indexes, then back.
    parseRequest('session::append-many', {
      session_id: 's',
      messages: [user(text('a')), user(text('b'), text('c'))],
    })
    expect(
      errorOf(() =>
        parseRequest('session::append-many', {
          session_id: 's',
          messages: [user(text('a')), user(text('b'), text(null))],
        }),
      ),
    ).toMatch(/^session\/invalid_request: messages\[1\]\.content\[1\]\.text: missing required field/)
    expect(
      errorOf(() => parseRequest('session::append', { session_id: 's', message: user(text(1)) })),
    ).toMatch(/^session\/invalid_request: message\.content\[0\]\.text: expected a string/)
    expect(errorOf(() => parseAgentMessage(user(text('a'), { type: 'text' }), ''))).toMatch(
      /^session\/invalid_request: content\[1\]\.text: missing required field/,
    )
    expect(
      errorOf(() =>
        parseRequest('session::append', { session_id: 's', message: { role: 'user', content: [text('x')] } }),
      ),
    ).toMatch(/^session\/invalid_request: message\.timestamp: missing required field/)
  })

  it('name the failing place inside a schema nested in itself (tool results hold blocks)', () => {
    const result = (content: unknown[]) => ({ type: 'function_result', function_call_id: 'c1', content })
    const nested = user(text('a'), result([text('b'), result([text('c'), text(false)])]))
    expect(errorOf(() => parseRequest('session::append', { session_id: 's', message: nested }))).toMatch(
      /^session\/invalid_request: message\.content\[1\]\.content\[1\]\.content\[1\]\.text: expected a string/,
    )
    // The outer place again, after the schemas were used deeper down.
    expect(
      errorOf(() =>
        parseRequest('session::append', { session_id: 's', message: user(result([text('b')]), text(3)) }),
      ),
    ).toMatch(/^session\/invalid_request: message\.content\[1\]\.text: expected a string/)
    // An outer value after a nested one of the same schema that held more items or fields.
    expect(
      errorOf(() =>
        parseRequest('session::append', {
          session_id: 's',
          message: user(result([text('b'), text('c')]), text(3)),
        }),
      ),
    ).toMatch(/^session\/invalid_request: message\.content\[1\]\.text: expected a string/)
    expect(
      errorOf(() =>
        parseRequest('session::append', {
          session_id: 's',
          message: user({ ...result([result([text('c')])]), is_error: 'yes' }),
        }),
      ),
    ).toMatch(/^session\/invalid_request: message\.content\[0\]\.is_error: expected a boolean/)
    const good = parseRequest('session::append', {
      session_id: 's',
      message: user(text('a'), result([text('b'), result([text('c')])])),
    })
    const blocks = good.message!.content as unknown as Array<{
      content: Array<{ content: Array<{ text: string }> }>
    }>
    expect(blocks[1].content[1].content[0].text).toBe('c')
  })
})
