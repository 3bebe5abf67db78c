import { createStore, memoryStorage, type ReplicaChange, type Store } from '@colloquy/core'
import { replicaChangesOf } from '@colloquy/core/replica'
import { keyed } from '../src/outbox.js'
import type {
  PullResponse,
  PushRequest,
  PushResponse,
  SequencedChange,
  StreamMessage,
} from '@colloquy/core/protocol'
import type { Transport } from '../src/index.js'

/**
 * An in-process stand-in for the server, for the sync engine's unit tests: the same core store
 * with the push rules and a sequence of committed changes. Faults are switched on per test. The
 * real server is exercised end to end elsewhere.
 */
export interface Loopback {
  readonly store: Store
  readonly log: SequencedChange[]
  readonly requests: { push: number; pull: number; upload: number; download: number }
  /** Bytes received by uploads, and uploads that reused bytes the session already held. */
  uploadedBytes: number
  reused: number
  online: boolean
  /** Applies the next push, then fails as if its response was lost. */
  loseNextPushResponse: boolean
  /** Answers pushes without `seq` (as a server from before it did). */
  omitPushSeq: boolean
  /** When set, each stream frame is delivered after this many ms (frames then arrive out of order). */
  streamDelay?: () => number
  /** Resolves once every stream frame sent so far has been handed to its device (delayed ones too). */
  delivered(): Promise<void>
  transport(): Transport
  close(): Promise<void>
}

export async function loopback(): Promise<Loopback> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const log: SequencedChange[] = []
  const streams = new Set<{ since: number; send(m: StreamMessage): void }>()
  // Frames sent and not yet handed over, and who waits for there to be none.
  let inFlight = 0
  const idle: Array<() => void> = []
  const handOver = (deliver: () => void) => () => {
    try {
      deliver()
    } finally {
      if (--inFlight === 0) for (const w of idle.splice(0)) w()
    }
  }
  store.commits$.subscribe((c) => {
    const fresh = replicaChangesOf(c).map((change: ReplicaChange, i) => ({ seq: log.length + 1 + i, change }))
    log.push(...fresh)
    if (!fresh.length) return
    for (const s of streams) {
      s.send({ type: 'changes', changes: fresh, prev: s.since, checkpoint: log.length, head: log.length })
      s.since = log.length
    }
  })
  const lb: Loopback = {
    store,
    log,
    requests: { push: 0, pull: 0, upload: 0, download: 0 },
    uploadedBytes: 0,
    reused: 0,
    online: true,
    loseNextPushResponse: false,
    omitPushSeq: false,
    delivered: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r))),
    transport() {
      const offline = (): Error =>
        Object.assign(new Error('network: offline'), { name: 'TransportError', retryable: true })
      return {
        async push(req: PushRequest): Promise<PushResponse> {
          lb.requests.push++
          if (!lb.online) throw offline()
          const results = await store.applyReplica(
            req.mutations.map((m) => m.change),
            { policy: 'push', source: 'local' },
          )
          if (lb.loseNextPushResponse) {
            lb.loseNextPushResponse = false
            throw offline()
          }
          // Where each applied mutation's key stands in the log now (the newest record of it).
          const seqOf = (c: ReplicaChange): number | undefined => {
            const k = keyed(c)
            for (let i = log.length - 1; k !== undefined && i >= 0; i--)
              if (keyed(log[i].change) === k) return log[i].seq
            return undefined
          }
          return structuredClone({
            results: results.map((r, i) => {
              const seq =
                !lb.omitPushSeq && (r.status === 'applied' || r.status === 'unchanged')
                  ? seqOf(req.mutations[i].change)
                  : undefined
              return { id: req.mutations[i].id, ...r, ...(seq !== undefined && { seq }) }
            }),
          })
        },
        async pull(since: number, limit: number): Promise<PullResponse> {
          lb.requests.pull++
          if (!lb.online) throw offline()
          const changes = log.filter((c) => c.seq > since).slice(0, limit)
          const checkpoint = changes.length ? changes[changes.length - 1].seq : Math.max(since, log.length)
          return structuredClone({ changes, checkpoint, head: log.length, more: checkpoint < log.length })
        },
        async uploadAttachment(session_id, attachment, bytes) {
          lb.requests.upload++
          if (!lb.online) throw offline()
          const held = store.engine.state.sessions.get(session_id)?.head.attachments ?? []
          // The same bytes are sent once: a session already holding them takes them from there.
          if (held.some((a) => a.sha256 === attachment.sha256)) lb.reused++
          else lb.uploadedBytes += bytes.size
          const [r] = await store.applyReplica([{ type: 'attachment', session_id, attachment, bytes }], {
            policy: 'push',
            source: 'local',
          })
          if (r.status === 'rejected')
            throw Object.assign(new Error(r.message), { name: 'TransportError', retryable: false })
        },
        async downloadAttachment(session_id, attachment_id) {
          lb.requests.download++
          if (!lb.online) throw offline()
          return store.getAttachmentBlob(session_id, attachment_id)
        },
        stream(since, onMessage, onClose) {
          if (!lb.online) {
            queueMicrotask(() => onClose(offline()))
            return { close() {} }
          }
          const s = {
            since,
            send: (m: StreamMessage) => {
              const copy = structuredClone(m)
              inFlight++
              const deliver = handOver(() => onMessage(copy))
              if (lb.streamDelay) setTimeout(deliver, lb.streamDelay())
              else queueMicrotask(deliver)
            },
          }
          // A stream starts with everything after `since`, then follows new commits.
          const backlog = log.filter((c) => c.seq > since)
          if (backlog.length)
            s.send({
              type: 'changes',
              changes: backlog,
              prev: since,
              checkpoint: log.length,
              head: log.length,
            })
          s.since = log.length
          streams.add(s)
          return { close: () => void streams.delete(s) }
        },
      }
    },
    async close() {
      streams.clear()
      await store.close()
    },
  }
  return lb
}
