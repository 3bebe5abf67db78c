import { afterAll, beforeAll } from 'vitest'
import { startServer, type ServerProcess } from '../server/helpers.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

/**
 * Several `colloquy-server` processes on one PostgreSQL database, as behind a load balancer: a
 * throwaway cluster and database for the file, and `start(...args)` for each instance (killed
 * with SIGKILL after the file, as a crash would). `args` come before each start's own.
 */
export function useInstances(...args: string[]): {
  start(...more: string[]): Promise<ServerProcess>
  readonly cluster: TestCluster
  /** Every instance started, in order (killed ones included). */
  readonly servers: readonly ServerProcess[]
  /** The database's connection string. */
  readonly db: string
  /** Runs a query in the instances' database. */
  query<T extends Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
} {
  let cluster: TestCluster | undefined
  let db = ''
  const servers: ServerProcess[] = []
  beforeAll(async () => {
    cluster = await startPostgres()
    db = await cluster.createDatabase()
  })
  afterAll(async () => {
    for (const s of servers) await s.stop('SIGKILL')
    cluster?.stop()
  })
  return {
    async start(...more) {
      const s = await startServer(['--postgres', db, ...args, ...more])
      servers.push(s)
      return s
    },
    get cluster() {
      return cluster!
    },
    servers,
    get db() {
      return db
    },
    async query<T extends Record<string, unknown>>(text: string, params?: unknown[]) {
      return (await cluster!.query<T>(text, params, db.slice(db.lastIndexOf('/') + 1))).rows
    },
  }
}
