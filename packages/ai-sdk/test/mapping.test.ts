import { describe, expect, it } from 'vitest'
import { entriesOf } from '@colloquy/parts'
import { partsFromUIMessage, toUIMessage } from '../src/mapping.js'
import { callWithResult, expectRoundTrip } from '../../../test/support/adapter-mapping.js'

describe('Colloquy entries ↔ AI SDK UIMessages', () => {
  it('round trip through a UIMessage (and its JSON, as a route would store it) gives back the same entries', () => {
    expectRoundTrip((node) => {
      const ui = JSON.parse(JSON.stringify(toUIMessage(node)))
      return { id: ui.id, entries: entriesOf(node, partsFromUIMessage(ui), ui.metadata) }
    })
  })

  it('maps tool calls to tool parts with their output or error, thinking to reasoning, images to files', () => {
    const tree = callWithResult({
      stop_reason: 'function_call',
      content: [
        { type: 'thinking', text: 'plan' },
        { type: 'function_call', id: 'c1', function_id: 'read', arguments: { path: 'x' } },
        { type: 'image', mime: 'image/png', data: 'AA==' },
      ],
      function_id: 'read',
      result: { text: 'no such file', details: null, is_error: true },
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
