import { describe, expect, it } from 'vitest'
import { checkJsonShape, DEFAULT_JSON_LIMITS, parseJson, type JsonLimits } from '../src/http/json-limits.js'

const small: JsonLimits = { maxDepth: 4, maxArrayLength: 3, maxObjectKeys: 2, maxStringLength: 5 }
const refused = (text: string, limits = small): string => {
  try {
    parseJson(text, limits)
  } catch (e) {
    return (
      (e as { code: string; status: number; message: string }).code + ' ' + (e as { status: number }).status
    )
  }
  return 'accepted'
}

describe('the server JSON parser checks shape before parsing', () => {
  it('accepts what is within every limit, exactly at the limits', () => {
    expect(parseJson('[[[["a"]]]]', small)).toStrictEqual([[[['a']]]])
    expect(parseJson('[1,2,3]', small)).toStrictEqual([1, 2, 3])
    expect(parseJson('{"a":1,"b":{"c":2}}', small)).toStrictEqual({ a: 1, b: { c: 2 } })
    expect(parseJson('"abcde"', small)).toBe('abcde')
    // Brackets, commas and quotes inside strings are not structure.
    expect(parseJson('{"a":"[[[,,,{{","b":"\\"]]"}', { ...small, maxStringLength: 10 })).toStrictEqual({
      a: '[[[,,,{{',
      b: '"]]',
    })
    // Escaped backslashes before a quote: an even run ends the string, an odd one does not.
    expect(parseJson('["a\\\\",1]', { ...small, maxStringLength: 10 })).toStrictEqual(['a\\', 1])
    expect(parseJson('["\\"[[[[[["]', { ...small, maxStringLength: 10 })).toStrictEqual(['"[[[[[['])
    expect(parseJson('[]', small)).toStrictEqual([])
    expect(parseJson('{}', small)).toStrictEqual({})
  })

  it('refuses each limit passed with 400 session/invalid_request', () => {
    expect(refused('[[[[[1]]]]]')).toBe('session/invalid_request 400')
    expect(refused('[1,2,3,4]')).toBe('session/invalid_request 400')
    expect(refused('{"a":1,"b":2,"c":3}')).toBe('session/invalid_request 400')
    expect(refused('"abcdef"')).toBe('session/invalid_request 400')
    expect(refused('{"abcdef":1}')).toBe('session/invalid_request 400')
    expect(refused('{"a":')).toBe('session/invalid_request 400')
  })

  it('names where a limit was passed, as the core names fields, with hostile keys cut short', () => {
    const message = (text: string, limits = small): string => {
      try {
        parseJson(text, limits)
      } catch (e) {
        return (e as Error).message
      }
      return 'accepted'
    }
    expect(message('{"a":{"b":[1,[[1]]]}}')).toBe(
      'session/invalid_request: a.b[1][0]: JSON nested deeper than 4 levels',
    )
    expect(message('{"a":[1,2,3,4]}')).toBe(
      'session/invalid_request: a: JSON array with more than 3 elements',
    )
    expect(message('{"x":1,"y":{"p":1,"q":2,"r":3}}')).toBe(
      'session/invalid_request: y: JSON object with more than 2 keys',
    )
    expect(message('{"x":["abcdef"]}')).toBe(
      'session/invalid_request: x[0]: JSON string longer than 5 characters',
    )
    const key = 'k'.repeat(1000)
    expect(message(`{"${key}":[[[[1]]]]}`, { ...small, maxStringLength: 2000 })).toBe(
      `session/invalid_request: ${'k'.repeat(40)}…[0][0][0]: JSON nested deeper than 4 levels`,
    )
  })

  it('a body nested 1,000,000 deep is refused in one pass, without recursion', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000)
    expect(() => checkJsonShape(deep, DEFAULT_JSON_LIMITS)).toThrow(
      /^session\/invalid_request: \[0\]\[0\]\[0\]\[0\]\[0\]\[0\]\[0\]\[0\]…: JSON nested deeper than 64/,
    )
    // Unbalanced and truncated texts too (JSON.parse never sees them).
    expect(refused('['.repeat(1_000_000), DEFAULT_JSON_LIMITS)).toBe('session/invalid_request 400')
    expect(refused(']'.repeat(1_000_000) + '[', DEFAULT_JSON_LIMITS)).toBe('session/invalid_request 400')
  })
})
