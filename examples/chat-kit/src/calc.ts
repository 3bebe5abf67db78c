/**
 * The `calc::eval` tool: arithmetic by recursive descent (+ - * / % ^, parentheses, unary minus).
 * Never `eval`: the expression comes from whatever a user typed.
 */
export function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/%^()]|\S/g) ?? []
  let i = 0
  const peek = (): string | undefined => tokens[i]
  const take = (): string | undefined => tokens[i++]

  const primary = (): number => {
    const t = take()
    if (t === '(') {
      const v = sum()
      if (take() !== ')') throw new Error('missing )')
      return v
    }
    if (t === '-') return -primary()
    if (t === '+') return primary()
    if (t !== undefined && /^\d/.test(t)) return Number(t)
    throw new Error(t === undefined ? 'unexpected end of expression' : `unexpected "${t}"`)
  }
  const power = (): number => {
    const base = primary()
    // Right-associative, as in maths: 2^3^2 = 2^9.
    if (peek() === '^') {
      take()
      return base ** power()
    }
    return base
  }
  const product = (): number => {
    let v = power()
    for (let op = peek(); op === '*' || op === '/' || op === '%'; op = peek()) {
      take()
      const r = power()
      v = op === '*' ? v * r : op === '/' ? v / r : v % r
    }
    return v
  }
  const sum = (): number => {
    let v = product()
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      take()
      const r = product()
      v = op === '+' ? v + r : v - r
    }
    return v
  }

  const value = sum()
  if (i < tokens.length) throw new Error(`unexpected "${tokens[i]}"`)
  if (!Number.isFinite(value)) throw new Error('the result is not a finite number')
  return value
}

/** The first arithmetic expression in a sentence ("what is 12 * (3 + 4)?" → "12 * (3 + 4)"), if any. */
export function findExpression(text: string): string | null {
  for (const m of text.matchAll(/[-+(]*\d[\d.\s]*(?:[-+*/%^()\s]+[\d.]+[\d.\s)]*)+/g)) {
    const candidate = m[0].trim()
    if (/\d\s*[-+*/%^]\s*[-+(]*\d/.test(candidate)) return candidate
  }
  return null
}
