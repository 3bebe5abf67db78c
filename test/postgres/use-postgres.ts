import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { setDataBackend, setStorageArgs } from '../server/helpers.js'
import { postgresBin, startPostgres, type TestCluster } from '../support/postgres.js'

// Imported before a server suite: the suite's servers run on PostgreSQL, each on a database of
// its own in one throwaway cluster for the file.
let cluster: TestCluster | undefined
let starting: Promise<TestCluster> | undefined
beforeAll(async () => {
  cluster = await (starting ??= startPostgres())
})
afterAll(() => cluster?.stop())
setStorageArgs(async () => ['--postgres', await (await (starting ??= startPostgres())).createDatabase()])
// A suite that restarts its server on the same data (the fuzz suite) gets a database per run.
// Its budget is smaller than on files: every start runs migrations and a restart reconnects.
setDataBackend({
  name: 'PostgreSQL',
  runs: 4,
  serverIndex: false,
  async data() {
    const cluster = await (starting ??= startPostgres())
    const url = await cluster.createDatabase()
    return {
      args: ['--postgres', url],
      remove: async () => {},
      raw: async () => [
        execFileSync(join(postgresBin(), 'pg_dump'), ['--data-only', '-d', url], { maxBuffer: 1 << 28 }),
      ],
      contents: async (session_id: string) =>
        (
          await cluster.query<{ sha256: string; bytes: string }>(
            'SELECT sha256, sum(octet_length(data))::bigint AS bytes FROM colloquy_attachment_chunks WHERE session_id = $1 GROUP BY sha256 ORDER BY sha256',
            [session_id],
            url.slice(url.lastIndexOf('/') + 1),
          )
        ).rows.map((r) => ({ sha256: r.sha256, bytes: Number(r.bytes) })),
    }
  },
})
