import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import {
  createSync,
  httpTransport,
  type Sync,
  type SyncOptions,
  type Transport,
} from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import { currentDataBackend, rpc, startServer, user, type KeptData, type ServerProcess } from './helpers.js'

// An agent appending back to back while synced: its own changes echoing back from the server
// (pull, live stream) while a newer one is in flight must never move its leaf back, or its next
// message would branch off an older one. On the file storage here, on PostgreSQL in test/postgres.
let server: ServerProcess
let data: KeptData
beforeAll(async () => {
  data = await currentDataBackend().data()
  server = await startServer([...data.args, '--token', 'alice=tok-a'])
})
afterAll(async () => {
  await server?.stop()
  await data?.remove()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * The HTTP transport over a slower network: each push answer and each stream frame comes some
 * ms later, so echoes of older changes arrive after newer ones were sent.
 */
function slowNetwork(options: SyncOptions): Transport {
  const t = httpTransport(options)
  return {
    ...t,
    push: async (req) => {
      const answer = await t.push(req)
      await sleep(Math.random() * 15)
      return answer
    },
    pull: t.pull.bind(t),
    uploadAttachment: t.uploadAttachment?.bind(t),
    downloadAttachment: t.downloadAttachment?.bind(t),
    stream: (since, onMessage, onClose, epoch) => {
      // A socket keeps its frames in order: each waits for the one before it.
      let lag = Promise.resolve()
      return t.stream(
        since,
        (m) => void (lag = lag.then(() => sleep(Math.random() * 20)).then(() => onMessage(m))),
        onClose,
        epoch,
      )
    },
  }
}

async function device(): Promise<{ store: Store; sync: Sync; close(): Promise<void> }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const options: SyncOptions = {
    url: server.url,
    token: 'tok-a',
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
  }
  const sync = createSync(store, { ...options, transport: slowNetwork(options) })
  sync.start()
  return { store, sync, close: async () => (sync.close(), await store.close()) }
}

describe(`fast appends while synced (${currentDataBackend().name})`, () => {
  it('messages appended 10-20 ms apart form one chain on both devices and on the server', async () => {
    const a = await device()
    const b = await device()
    try {
      const { session_id } = await a.store.create({ title: 'agent run' })
      await a.sync.flush()
      const pending: Array<Promise<{ entry_id: string }>> = []
      for (let i = 0; i < 60; i++) {
        pending.push(a.store.append({ session_id, message: user(`tool call ${i}`) }))
        await sleep(10 + Math.random() * 10)
      }
      const ids = (await Promise.all(pending)).map((r) => r.entry_id)
      const chain = [null, ...ids.slice(0, -1)]
      await a.sync.flush()
      await b.sync.flush()
      await a.sync.flush()
      for (const [name, store] of [
        ['A', a.store],
        ['B', b.store],
      ] as const) {
        const parents = await Promise.all(
          ids.map(async (entry_id) => (await store.getMessage({ session_id, entry_id }))?.entry.parent_id),
        )
        expect(parents, `parents on ${name}`).toEqual(chain)
        expect(store.engine.state.sessions.get(session_id)?.head.leaf, `leaf on ${name}`).toBe(
          ids[ids.length - 1],
        )
      }
      const onServer = await rpc(server.url, 'session::messages', { session_id, limit: 500 }, 'tok-a')
      expect(onServer.messages.map((m: { entry_id: string }) => m.entry_id)).toEqual(ids)
    } finally {
      await a.close()
      await b.close()
    }
  })
})
