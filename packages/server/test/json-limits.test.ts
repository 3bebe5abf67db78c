import { describe, expect, it } from 'vitest'
import {
  checkJsonShape,
  DEFAULT_JSON_LIMITS,
  parseJson,
  parseJsonInSlices,
  type JsonLimits,
} from '../src/http/json-limits.js'
import { WORK_BUDGETS } from '../src/work.js'

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

describe('a large body is checked in slices, other work running between them', () => {
  /** A push-like body of about `chars` characters whose strings hold every character the scan treats specially. */
  const body = (chars: number): string => {
    const one = { id: 0, change: { type: 'entry', text: 'a "quoted" [not, structure] {x} \\ end' } }
    const n = Math.ceil(chars / JSON.stringify(one).length)
    return JSON.stringify({ mutations: Array.from({ length: n }, (_, id) => ({ ...one, id })) })
  }
  /** Counts the turns of the event loop taken while `work` runs. */
  const turnsDuring = async (work: () => Promise<unknown>): Promise<number> => {
    let turns = 0
    let on = true
    const tick = (): void => {
      if (!on) return
      turns++
      setImmediate(tick)
    }
    setImmediate(tick)
    try {
      await work()
    } finally {
      on = false
    }
    return turns
  }

  it('gives the same value as one pass, letting the loop turn about once per slice', async () => {
    const text = body(40 * WORK_BUDGETS.sliceChars)
    let value: unknown
    const turns = await turnsDuring(async () => (value = await parseJsonInSlices(text, DEFAULT_JSON_LIMITS)))
    expect(value).toStrictEqual(JSON.parse(text))
    // Work counted, not timed: one slice of the scan per turn (JSON.parse itself is one more).
    expect(turns).toBeGreaterThanOrEqual(Math.floor(text.length / WORK_BUDGETS.sliceChars) - 1)
    // A small body takes no turn at all.
    expect(await turnsDuring(() => parseJsonInSlices('{"a":[1,2]}', DEFAULT_JSON_LIMITS))).toBe(0)
  })

  it('refuses what one pass refuses, with the same message, wherever the violation is', async () => {
    const text = body(10 * WORK_BUDGETS.sliceChars)
    const limits = { ...DEFAULT_JSON_LIMITS, maxArrayLength: 100 }
    const late = text.slice(0, -2) + ',[[[[[[[[[[1]]]]]]]]]]]}'
    for (const [t, l] of [
      [text, limits],
      [late, { ...DEFAULT_JSON_LIMITS, maxDepth: 8 }],
      [text.slice(0, -1), DEFAULT_JSON_LIMITS],
    ] as const) {
      const once = (() => {
        try {
          return parseJson(t, l)
        } catch (e) {
          return (e as Error).message
        }
      })()
      expect(typeof once).toBe('string')
      await expect(parseJsonInSlices(t, l)).rejects.toThrow(once as string)
    }
  })
})
