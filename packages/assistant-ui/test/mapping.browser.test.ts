import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { entriesOf, foldTree } from '@colloquy/parts'
import { partsFromThreadMessage, toThreadMessage } from '../src/mapping.js'
import { sessionTree } from '../../../test/support/chat-arbitraries.js'

describe('Colloquy entries ↔ assistant-ui ThreadMessages', () => {
  it('round trip through a ThreadMessage gives back the same entries', () => {
    fc.assert(
      fc.property(sessionTree, ({ tree }) => {
        for (const node of foldTree(tree).nodes) {
          const m = toThreadMessage(node)
          expect(m.id).toBe(node.id)
          expect(entriesOf(node, partsFromThreadMessage(m), node.metadata)).toEqual(node.entries)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('a tool call carries its result entry on the tool-call part; blank text is kept though assistant-ui drops it', () => {
    const tree = foldTree({
      active_leaf: 'r',
      entries: new Map([
        [
          'a',
          {
            id: 'a',
            parent_id: null,
            timestamp: 1,
            revision: 0,
            kind: 'message',
            message: {
              role: 'assistant',
              model: 'm',
              provider: 'p',
              stop_reason: 'end',
              timestamp: 1,
              content: [
                { type: 'text', text: ' ' },
                { type: 'function_call', id: 'c1', function_id: 'calc', arguments: { e: '1+1' } },
              ],
            },
          },
        ],
        [
          'r',
          {
            id: 'r',
            parent_id: 'a',
            timestamp: 2,
            revision: 0,
            kind: 'message',
            message: {
              role: 'function_result',
              function_call_id: 'c1',
              function_id: 'calc',
              content: [{ type: 'text', text: '2' }],
              timestamp: 2,
              details: { ms: 1 },
              is_error: false,
            },
          },
        ],
      ]),
      children: new Map([
        [null, ['a']],
        ['a', ['r']],
      ]),
    })
    const m = toThreadMessage(tree.nodes[0])
    expect(m.content).toMatchObject([
      {
        type: 'tool-call',
        toolCallId: 'c1',
        toolName: 'calc',
        args: { e: '1+1' },
        result: '2',
        isError: false,
      },
    ])
    expect(entriesOf(tree.nodes[0], partsFromThreadMessage(m))).toEqual(tree.nodes[0].entries)
  })
})
