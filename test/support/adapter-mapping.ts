import { expect } from 'vitest'
import fc from 'fast-check'
import type { AssistantMessage, ContentBlock, Json, SessionEntry } from '@colloquy/core'
import { foldTree, type ChatNode, type ChatTree } from '@colloquy/parts'
import { sessionTree } from './chat-arbitraries.js'

// What every framework adapter's mapping must keep, written once for all of them.

/**
 * Each node of random sessions goes out as the framework's message and comes back: the message
 * has the node's id, and what it maps back to is the node's entries, to the letter.
 */
export function expectRoundTrip(through: (node: ChatNode) => { id: string; entries: SessionEntry[] }): void {
  fc.assert(
    fc.property(sessionTree, ({ tree }) => {
      for (const node of foldTree(tree).nodes) {
        const back = through(node)
        expect(back.id).toBe(node.id)
        expect(back.entries).toEqual(node.entries)
      }
    }),
    { numRuns: 300 },
  )
}

/** An assistant message `a` calling function `c1`, then `r`, that call's result: one node. */
export function callWithResult(call: {
  stop_reason: AssistantMessage['stop_reason']
  content: ContentBlock[]
  function_id: string
  result: { text: string; details: Json; is_error: boolean }
}): ChatTree {
  const { stop_reason, content, function_id, result } = call
  return foldTree({
    active_leaf: 'r',
    entries: new Map<string, SessionEntry>([
      [
        'a',
        {
          id: 'a',
          parent_id: null,
          timestamp: 1,
          revision: 0,
          kind: 'message',
          message: { role: 'assistant', model: 'm', provider: 'p', stop_reason, timestamp: 1, content },
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
            function_id,
            content: [{ type: 'text', text: result.text }],
            timestamp: 2,
            details: result.details,
            is_error: result.is_error,
          },
        },
      ],
    ]),
    children: new Map([
      [null, ['a']],
      ['a', ['r']],
    ]),
  })
}
