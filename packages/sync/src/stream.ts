import { checkStream } from './answers.js'
import { backoffDelay } from './backoff.js'
import { apply } from './pull.js'
import { beginResync } from './resync.js'
import { closeStream, setStatus, wake, type Replication } from './state.js'
import { TransportError } from './transport.js'

/**
 * Follows the server's live stream from the checkpoint. Anything unexpected (a refused or
 * malformed frame, a gap, a close) drops the connection and wakes the loop, which pulls from the
 * checkpoint and opens a new one.
 */
export function openStream(s: Replication): void {
  if (s.stream) return
  const w = (): void => wake(s)
  s.stream = s.transport.stream(
    s.checkpoint,
    (frame: unknown) => {
      const m = checkStream(frame)
      // A refused or malformed frame: drop this connection and come back through the loop
      // (pull, then a new stream), as for any other stream failure.
      if (m instanceof TransportError) {
        closeStream(s)
        setStatus(s, { state: 'error', error: m.message })
        // As long as the server asked (an error frame's `retry_after_ms`), else a growing backoff.
        setTimeout(w, m.retryAfterMs ?? backoffDelay(++s.streamRefusals))
        return
      }
      // Answers to pings and pushes sent on the stream: this client sends neither there.
      if (m.type === 'pushed' || m.type === 'pong') return
      s.head = Math.max(s.head, m.head)
      if (m.type === 'reset') {
        void beginResync(s, m.epoch).then(w, w)
        return
      }
      if (m.type === 'ready') {
        s.streamRefusals = 0
        void apply(s, [], m.checkpoint).catch(w)
        return
      }
      // A gap (changes this connection skipped): drop the connection, pull from the
      // checkpoint and reopen, rather than trusting anything more it says.
      if (m.prev > s.checkpoint) {
        closeStream(s)
        return w()
      }
      apply(s, m.changes, m.checkpoint).then(
        () => setStatus(s, { last_synced_at: s.now() }),
        () => w(),
      )
    },
    (error) => {
      s.stream = undefined
      if (!error) return
      // Refused for too many sockets: come back later, not at once (reset once a stream is ready).
      if (error instanceof TransportError && error.status === 429)
        setTimeout(w, backoffDelay(++s.streamRefusals))
      else w()
    },
    s.epoch,
  )
}
