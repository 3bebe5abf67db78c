import { afterAll, beforeAll } from 'vitest'
import { setDataBackend, setStorageArgs } from '../server/helpers.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

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
  data: async () => ({ args: ['--postgres', await (await (starting ??= startPostgres())).createDatabase()], remove: async () => {} }),
})
