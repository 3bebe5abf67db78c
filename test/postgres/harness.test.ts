import { existsSync } from 'node:fs'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startPostgres, type TestCluster } from '../support/postgres.js'

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

test('a throwaway cluster answers on a loopback port, gives each caller its own database and survives an immediate restart', async () => {
  const a = await cluster.createDatabase()
  const b = await cluster.createDatabase()
  expect(a).not.toBe(b)
  expect(a).toMatch(/^postgres:\/\/colloquy@127\.0\.0\.1:\d+\//)
  const db = a.slice(a.lastIndexOf('/') + 1)
  await cluster.query('CREATE TABLE t (x int)', [], db)
  await cluster.query('INSERT INTO t VALUES (42)', [], db)
  cluster.restart('immediate')
  expect((await cluster.query('SELECT x FROM t', [], db)).rows).toEqual([{ x: 42 }])
  const dir = cluster.dir
  cluster.stop()
  expect(existsSync(dir)).toBe(false)
  cluster = await startPostgres()
})
