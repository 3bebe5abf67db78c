import { describe, expect, it } from 'vitest'
import type { AgentMessage, SessionMeta } from '@colloquy/core'
import { INTERRUPTED_REASON, STOPPED_REASON } from '@colloquy/parts'
import { replyEnd, statusLabel } from '../src/index.js'

const meta = (status: SessionMeta['status'], status_reason?: string): SessionMeta =>
  ({
    session_id: 's',
    title: '',
    description: '',
    status,
    ...(status_reason !== undefined && { status_reason }),
    kind: 'user',
    created_at: 0,
    updated_at: 0,
    message_count: 2,
  }) as SessionMeta
const reply = (stop_reason: 'end' | 'aborted' | 'error' = 'end', error_message?: string): AgentMessage => ({
  role: 'assistant',
  content: [],
  stop_reason,
  model: 'm',
  provider: 'p',
  timestamp: 0,
  ...(error_message && { error_message }),
})

describe('one vocabulary for how a reply ended', () => {
  it('reads the last reply from the session the reply writer left', () => {
    expect(replyEnd(reply(), meta('done', STOPPED_REASON), true)?.label).toBe('Stopped')
    expect(replyEnd(reply(), meta('error', INTERRUPTED_REASON), true)?.label).toBe('Interrupted')
    expect(replyEnd(reply(), meta('error', 'HTTP 500 from the endpoint'), true)).toEqual({
      state: 'failed',
      label: 'Failed',
      detail: 'HTTP 500 from the endpoint',
    })
    expect(replyEnd(reply(), meta('done'), true)).toBeNull()
    // Still streaming: no mark yet, whatever the message says.
    expect(replyEnd(reply('aborted'), meta('working', 'replying'), true)).toBeNull()
  })

  it('reads other replies from their own stop reason (as the reply writer records it, or imported), never from the session', () => {
    expect(replyEnd(reply(), meta('error', INTERRUPTED_REASON), false)).toBeNull()
    expect(replyEnd(reply('aborted'), meta('done'), false)?.label).toBe('Stopped')
    expect(replyEnd(reply('error', INTERRUPTED_REASON), meta('done'), false)?.state).toBe('interrupted')
    // The newest reply too, once the session tells nothing (a later status without a reason).
    expect(replyEnd(reply('error', INTERRUPTED_REASON), meta('done'), true)?.label).toBe('Interrupted')
    expect(replyEnd(reply('error', 'overloaded'), null, false)).toEqual({
      state: 'failed',
      label: 'Failed',
      detail: 'overloaded',
    })
    expect(
      replyEnd({ role: 'user', content: [], timestamp: 0 }, meta('error', INTERRUPTED_REASON), true),
    ).toBeNull()
  })

  it("names a chat's status with the same words", () => {
    expect(statusLabel(meta('working', 'replying')).label).toBe('Replying')
    expect(statusLabel(meta('done')).label).toBe('Done')
    expect(statusLabel(meta('done', STOPPED_REASON)).label).toBe('Stopped')
    expect(statusLabel(meta('error', INTERRUPTED_REASON)).label).toBe('Interrupted')
    expect(statusLabel(meta('error', 'boom')).label).toBe('Failed')
    expect(statusLabel(meta('idle')).label).toBe('Idle')
  })
})
