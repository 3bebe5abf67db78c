import { afterAll, beforeAll, describe, it } from 'vitest'
import fc from 'fast-check'
import { httpTransport } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import {
  action,
  encryptedStores,
  runScenario,
  type Backend,
  type Sealed,
} from '../../packages/sync/test/scenario.js'
import {
  currentDataBackend,
  pullAll,
  replica,
  startServer,
  type KeptData,
  type ServerProcess,
} from './helpers.js'
import { replicaSnapshot } from '../support/replica-snapshot.js'

// The sync engine's convergence property against real server processes (on its file storage
// here, on PostgreSQL through test/postgres/convergence.test.ts), with devices going offline and
// back and server processes killed (SIGKILL) and started again at random: in clear, and
// end-to-end encrypted with every device's store encrypted at rest over the same keyring, where
// the server's data must then hold no byte of what was written. On PostgreSQL the devices are
// spread over two server processes on one database (device d talks to instance d mod 2:
// pushes, pulls and live streams); the file storage serves one. Each mode has data of its own,
// so the marker scan sees only what its devices wrote.
describe.each(['clear', 'encrypted'] as const)(
  `replicas converge through real servers (${currentDataBackend().name}, %s)`,
  (mode) => {
    let data: KeptData
    const instances: ServerProcess[] = []
    let sealed: Sealed | undefined
    beforeAll(async () => {
      data = await currentDataBackend().data()
      const count = data.args.includes('--postgres') ? 2 : 1
      for (let i = 0; i < count; i++) instances.push(await startServer([...data.args, '--no-fsync']))
      if (mode === 'encrypted') sealed = await encryptedStores()
    })
    afterAll(async () => {
      for (const s of instances) await s.stop()
      await data?.remove()
    })

    // To the instance's current process: a restarted one listens on another port.
    const wire = (d: number) =>
      httpTransport({
        url: instances[d % instances.length].url,
        WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
      })
    const backend: Backend = {
      transport: (d) => ({
        push: (r) => wire(d).push(r),
        pull: (since, limit, epoch) => wire(d).pull(since, limit, epoch),
        stream: (since, onMessage, onClose, epoch) => wire(d).stream(since, onMessage, onClose, epoch),
      }),
      async restart(i) {
        const k = i % instances.length
        await instances[k].stop('SIGKILL')
        instances[k] = await startServer([...data.args, '--no-fsync'])
      },
      async truth() {
        // What a fresh replica pulls from the first instance: the server's state.
        const store = await replica()
        await store.applyReplica(
          (await pullAll(instances[0].url)).changes.map((c) => c.change),
          { policy: 'pull' },
        )
        const snap = await replicaSnapshot(store)
        await store.close()
        return snap
      },
      raw: async () => Buffer.concat(await data.raw()),
      close: async () => {},
    }

    it('random interleavings on 2-3 devices, with disconnects and server restarts, end equal to the server, every entry once, no integrity alarm; encrypted, no marker byte in its data', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc
            .integer({ min: 2, max: 3 })
            .chain((n) =>
              fc.tuple(
                fc.constant(n),
                fc.array(action(n, { restarts: true }), { minLength: 5, maxLength: 30 }),
              ),
            ),
          ([n, actions]) => runScenario(n, actions, backend, sealed),
        ),
        { numRuns: 12 },
      )
    }, 300_000)
  },
)
