import { describe, expect, it } from 'vitest'
import { entriesOf } from '@colloquy/parts'
import { partsFromThreadMessage, toThreadMessage } from '../src/mapping.js'
import { callWithResult, expectRoundTrip } from '../../../test/support/adapter-mapping.js'

describe('Colloquy entries ↔ assistant-ui ThreadMessages', () => {
  it('round trip through a ThreadMessage gives back the same entries', () => {
    expectRoundTrip((node) => {
      const m = toThreadMessage(node)
      return { id: m.id, entries: entriesOf(node, partsFromThreadMessage(m), node.metadata) }
    })
  })

  it('a tool call carries its result entry on the tool-call part; blank text is kept though assistant-ui drops it', () => {
    const tree = callWithResult({
      stop_reason: 'end',
      content: [
        { type: 'text', text: ' ' },
        { type: 'function_call', id: 'c1', function_id: 'calc', arguments: { e: '1+1' } },
      ],
      function_id: 'calc',
      result: { text: '2', details: { ms: 1 }, is_error: false },
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
