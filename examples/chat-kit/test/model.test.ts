import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '@colloquy/core'
import { evaluate, findExpression, replySteps } from '../src/index.js'

const reply = (prompt: string, variant = 0): ContentBlock[][] => [
  ...replySteps({ prompt, variant, now: Date.UTC(2025, 0, 2, 3, 4) }),
]
const final = (prompt: string, variant = 0): ContentBlock[] => reply(prompt, variant).at(-1)!

describe('the local model', () => {
  it('is deterministic: the same prompt and variant give the same steps', () => {
    expect(reply('Tell me about tides')).toEqual(reply('Tell me about tides'))
  })

  it('gives a different take for another variant (regenerate)', () => {
    expect(final('Tell me about tides', 1)).not.toEqual(final('Tell me about tides', 0))
  })

  it('streams text token by token: each step extends the previous one', () => {
    const steps = reply('hello there')
    expect(steps.length).toBeGreaterThan(10)
    const texts = steps.map((s) =>
      s
        .filter((b) => b.type === 'text')
        .map((b) => (b as { text: string }).text)
        .join(''),
    )
    for (let i = 1; i < texts.length; i++) expect(texts[i].startsWith(texts[i - 1])).toBe(true)
  })

  it('"demo" shows every block type: thinking, both tools with results, text and an image', () => {
    const blocks = final('demo please')
    expect(blocks.map((b) => b.type)).toEqual([
      'thinking',
      'function_call',
      'function_result',
      'function_call',
      'function_result',
      'text',
      'image',
    ])
    const [calc, calcResult, clock, clockResult] = blocks.slice(1, 5) as any[]
    expect(calc).toMatchObject({ function_id: 'calc::eval', arguments: { expression: '(17 + 25) * 2' } })
    expect(calcResult).toMatchObject({
      function_call_id: calc.id,
      is_error: false,
      content: [{ type: 'text', text: '84' }],
    })
    expect(clock.function_id).toBe('clock::now')
    expect(clockResult.content[0].text).toBe('2025-01-02T03:04:00.000Z')
    const image = blocks[6] as { mime: string; data: string }
    expect(image.mime).toBe('image/svg+xml')
    expect(atob(image.data)).toMatch(/^<svg /)
  })

  it('answers arithmetic with calc::eval and reports a bad expression as a tool error', () => {
    const text = (final('what is 12 * (3 + 4)?').find((b) => b.type === 'text') as { text: string }).text
    expect(text).toContain('12 * (3 + 4) = 84')
    const failed = final('compute 1 / 0 please').find((b) => b.type === 'function_result') as {
      is_error: boolean
    }
    expect(failed.is_error).toBe(true)
  })
})

describe('calc::eval', () => {
  it('follows precedence, parentheses, unary minus and right-associative powers', () => {
    expect(evaluate('1 + 2 * 3')).toBe(7)
    expect(evaluate('(1 + 2) * 3')).toBe(9)
    expect(evaluate('-2 ^ 2')).toBe(4)
    expect(evaluate('2 ^ 3 ^ 2')).toBe(512)
    expect(evaluate('7 % 4 - 0.5')).toBe(2.5)
  })

  it('refuses anything that is not arithmetic', () => {
    expect(() => evaluate('alert(1)')).toThrow(/unexpected/)
    expect(() => evaluate('(1 + 2')).toThrow(/missing \)/)
  })

  it('finds the expression inside a sentence', () => {
    expect(findExpression('what is 12 * (3 + 4)?')).toBe('12 * (3 + 4)')
    expect(findExpression('I have 3 cats')).toBeNull()
  })
})
