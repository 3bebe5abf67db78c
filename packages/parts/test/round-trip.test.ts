import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { ContentBlock } from '@colloquy/core'
import { blocksToParts, entriesOf, foldTree, splitParts } from '../src/index.js'
import { SIDECAR } from '../src/nodes.js'
import { partsToBlocks } from '../src/parts.js'
import { sessionTree } from '../../../test/support/chat-arbitraries.js'

describe('folding a session into framework messages', () => {
  it('every entry lands in exactly one message, or is a hidden custom entry', () => {
    fc.assert(
      fc.property(sessionTree, ({ tree, entries }) => {
        const chat = foldTree(tree)
        const folded = chat.nodes.flatMap((n) => n.entries.map((e) => e.id))
        expect(new Set(folded).size).toBe(folded.length)
        const hidden = entries
          .filter((e) => !folded.includes(e.id))
          .map((e) => (e.kind === 'custom' ? e.custom_type : 'message'))
        expect(hidden.every((t) => t !== 'message' && t !== SIDECAR)).toBe(true)
        // The path is every node here (one chain), in order, each following the one before.
        expect(chat.path).toEqual(chat.nodes)
        chat.path.forEach((n, i) => expect(n.parentId).toBe(i === 0 ? null : chat.path[i - 1].id))
      }),
      { numRuns: 300 },
    )
  })

  it('the random sessions cover what the mapping folds: result entries, inline results, sidecars, blank text', () => {
    const seen = { results: 0, inline: 0, sidecars: 0, blank: 0, custom: 0 }
    for (const { entries } of fc.sample(sessionTree, 200)) {
      for (const e of entries) {
        if (e.kind === 'custom' && e.custom_type === SIDECAR) seen.sidecars++
        if (e.kind !== 'message') continue
        if (e.message.role === 'function_result') seen.results++
        if (e.message.role === 'custom') seen.custom++
        if (e.message.content.some((b) => b.type === 'function_result')) seen.inline++
        if (e.message.content.some((b) => b.type === 'text' && !b.text.trim())) seen.blank++
      }
    }
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(10)
  })

  it('round trip: the parts of a node give back its entries exactly', () => {
    fc.assert(
      fc.property(sessionTree, ({ tree }) => {
        for (const node of foldTree(tree).nodes)
          expect(entriesOf(node, node.parts, node.metadata)).toEqual(node.entries)
      }),
      { numRuns: 300 },
    )
  })

  it('blocks ↔ parts: a tool call and the result right after it are one part; a result elsewhere is kept as data', () => {
    const blocks: ContentBlock[] = [
      { type: 'thinking', text: 'hm', signature: 'sig' },
      { type: 'function_call', id: 'c1', function_id: 'calc::eval', arguments: { expression: '1+1' } },
      {
        type: 'function_result',
        function_call_id: 'c1',
        content: [{ type: 'text', text: '2' }],
        is_error: false,
      },
      { type: 'text', text: 'It is 2.' },
      { type: 'function_result', function_call_id: 'c0', content: [] },
      { type: 'image', mime: 'image/png', data: 'iVBO' },
    ]
    const parts = blocksToParts(blocks)
    expect(parts).toEqual([
      { type: 'reasoning', text: 'hm', signature: 'sig' },
      {
        type: 'tool',
        toolCallId: 'c1',
        toolName: 'calc::eval',
        input: { expression: '1+1' },
        result: { output: '2', isError: false },
      },
      { type: 'text', text: 'It is 2.' },
      { type: 'extra', part: { type: 'data-colloquy-block', data: blocks[4] } },
      { type: 'file', kind: 'image', mediaType: 'image/png', url: 'data:image/png;base64,iVBO' },
    ])
    expect(partsToBlocks(parts)).toEqual(blocks)
  })

  it('parts with no block are set aside with their positions, and the metadata with them', () => {
    const { content, sidecar } = splitParts(
      [
        { type: 'extra', part: { type: 'step-start' } },
        { type: 'text', text: 'hi' },
        { type: 'file', kind: 'file', mediaType: 'application/pdf', url: 'https://example.com/a.pdf' },
      ],
      { at: 1 },
    )
    expect(content).toEqual([{ type: 'text', text: 'hi' }])
    expect(sidecar).toEqual({
      parts: [
        { index: 0, part: { type: 'extra', part: { type: 'step-start' } } },
        {
          index: 2,
          part: {
            type: 'file',
            kind: 'file',
            mediaType: 'application/pdf',
            url: 'https://example.com/a.pdf',
          },
        },
      ],
      metadata: { at: 1 },
    })
    expect(splitParts([{ type: 'text', text: 'x' }]).sidecar).toBeNull()
  })
})
