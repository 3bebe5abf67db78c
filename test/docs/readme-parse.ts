// README fenced blocks and their `<!-- docs-test: … -->` directives: pure parsing, used by the
// Node suite, the browser suite and the Vite plugin that serves blocks as modules.

/**
 * A fenced block and the directive written before it: `<!-- docs-test: … -->` on the last
 * non-blank line above the fence.
 */
export interface Block {
  /** README path relative to the repository root. */
  file: string
  /** 1-based line of the opening fence. */
  line: number
  lang: string
  text: string
  directive: string | undefined
}

const DIRECTIVE = /^<!--\s*docs-test:\s*([\s\S]*?)\s*-->$/

export function blocksOf(file: string, source: string): Block[] {
  const lines = source.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i])
    if (!open) continue
    const fence = open[2]
    let end = i + 1
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) end++
    if (end === lines.length) throw new Error(`${file}:${i + 1}: fence never closed`)
    let above = i - 1
    while (above >= 0 && lines[above].trim() === '') above--
    const directive = above >= 0 ? DIRECTIVE.exec(lines[above].trim())?.[1] : undefined
    blocks.push({
      file,
      line: i + 1,
      lang: open[3].toLowerCase(),
      text: lines.slice(i + 1, end).join('\n'),
      directive,
    })
    i = end
  }
  return blocks
}

export const label = (b: Block): string => `${b.file}:${b.line} (${b.lang || 'no language'})`

/** `skip — reason` (or `skip - reason`, `skip: reason`): the reason, or undefined when not a skip. */
export function skipReason(b: Block): string | undefined {
  const m = /^skip\s*(?:—|–|-|:)\s*(.*)$/s.exec(b.directive ?? '')
  return m ? m[1].trim() : undefined
}

/** Options of a directive such as `given store, session_id` or `files a=path`. */
export function directiveWords(b: Block, word: string): string[] | undefined {
  for (const part of (b.directive ?? '').split(';')) {
    const m = new RegExp(`^\\s*${word}\\b(.*)$`, 's').exec(part)
    if (m) return m[1].split(/[\s,]+/).filter(Boolean)
  }
  return undefined
}
