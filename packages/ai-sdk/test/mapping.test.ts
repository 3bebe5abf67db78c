import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { entriesOf, foldTree } from '@colloquy/parts'
import { partsFromUIMessage, toUIMessage } from '../src/mapping.js'
import { sessionTree } from '../../../test/support/chat-arbitraries.js'

describe('Colloquy entries ↔ AI SDK UIMessages', () => {
  it('round trip through a UIMessage (and its JSON, as a route would store it) gives back the same entries', () => {
    fc.assert(
      fc.property(sessionTree, ({ tree }) => {
        for (const node of foldTree(tree).nodes) {
          const ui = JSON.parse(JSON.stringify(toUIMessage(node)))
          expect(ui.id).toBe(node.id)
          expect(entriesOf(node, partsFromUIMessage(ui), ui.metadata)).toEqual(node.entries)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('maps tool calls to tool parts with their output or error, thinking to reasoning, images to files', () => {
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
              stop_reason: 'function_call',
              timestamp: 1,
              content: [
                { type: 'thinking', text: 'plan' },
                { type: 'function_call', id: 'c1', function_id: 'read', arguments: { path: 'x' } },
                { type: 'image', mime: 'image/png', data: 'AA==' },
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
              function_id: 'read',
              content: [{ type: 'text', text: 'no such file' }],
              timestamp: 2,
              details: null,
              is_error: true,
            },
          },
        ],
      ]),
      children: new Map([
        [null, ['a']],
        ['a', ['r']],
      ]),
    })
    expect(tree.nodes).toHaveLength(1)
    expect(toUIMessage(tree.nodes[0]).parts).toMatchObject([
      { type: 'reasoning', text: 'plan' },
      {
        type: 'tool-read',
        toolCallId: 'c1',
        state: 'output-error',
        input: { path: 'x' },
        errorText: 'no such file',
      },
      { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AA==' },
    ])
  })
})
