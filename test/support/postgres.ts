import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

/**
 * A throwaway PostgreSQL cluster from Debian's `postgresql` package, for tests and benchmarks:
 * a copy of a data directory `initdb` made once per run (see `template`), in a temporary
 * directory owned by a non-root user, `pg_ctl` on a free loopback port with its unix socket
 * inside that directory, removed afterwards. Clusters a crashed run left behind, and every
 * finished run's template, are found by their owner's pid file and removed by the next run.
 */
export interface TestCluster {
  readonly port: number
  readonly dir: string
  /** A new empty database; returns its connection string. */
  createDatabase(name?: string): Promise<string>
  /** `pg_ctl restart -m <mode>` (`immediate` is a crash of the database server). */
  restart(mode?: 'fast' | 'immediate'): void
  /** Runs SQL as the superuser on `database` (default `postgres`). */
  query<T extends pg.QueryResultRow = any>(
    sql: string,
    params?: unknown[],
    database?: string,
  ): Promise<pg.QueryResult<T>>
  stop(): void
}

const ROOT_PREFIX = 'colloquy-pg-'
const USER = 'colloquy'
const INITDB_ARGS = ['-A', 'trust', '-U', USER, '-E', 'UTF8', '--no-sync', '--no-instructions']

/** The newest `/usr/lib/postgresql/<version>/bin`, or a message naming the package to install. */
export function postgresBin(): string {
  const base = '/usr/lib/postgresql'
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (!versions.length) {
    throw new Error(
      "PostgreSQL is not installed: these tests need the server binaries of Debian's `postgresql` package (run `npm test` as root, or `apt-get install postgresql`)",
    )
  }
  return join(base, versions[0], 'bin')
}

/** As root, the cluster's commands run as the `postgres` user (initdb refuses root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).trim()
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

function run(bin: string, args: string[], user: { uid: number; gid: number } | undefined): void {
  const [cmd, argv] = user ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]
  const r = spawnSync(cmd, argv, { encoding: 'utf8' })
  if (r.status !== 0)
    throw new Error(`${bin} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`)
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Stops and removes clusters whose test process is gone (a crashed or killed run). */
function reapStrays(bin: string, user: { uid: number; gid: number } | undefined): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(ROOT_PREFIX)) continue
    const dir = join(tmpdir(), name)
    let owner = 0
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'))
    } catch {
      // A directory without an owner file older than a minute is a torn start.
      try {
        if (Date.now() - statSync(dir).mtimeMs < 60_000) continue
      } catch {
        continue
      }
    }
    if (owner && alive(owner)) continue
    if (existsSync(join(dir, 'data', 'postmaster.pid'))) {
      try {
        run(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), 'stop', '-m', 'immediate', '-w'], user)
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The data directory every cluster of this run is copied from. `initdb` is most of a cluster's
 * start (about 0.9 s of 1.2 s on an idle two-core machine, more when busy), and its output is the
 * same each time, so it runs once per run: the template belongs to the parent process (the Vitest
 * or benchmark runner whose workers start clusters) and is reaped with it like any stray cluster.
 * It is built in a directory of the builder's own and renamed into place, so a reader sees a
 * whole template or none, and of two workers racing the loser's rename fails and it uses the
 * winner's. Its name holds the binaries and options it was made with. It is only ever copied,
 * never started: a started one would no longer be a clean shutdown to copy.
 */
function template(bin: string, user: { uid: number; gid: number } | undefined): string {
  const key = createHash('sha256')
    .update(JSON.stringify([bin, INITDB_ARGS]))
    .digest('hex')
    .slice(0, 12)
  // An orphan (its parent gone, adopted by init) owns its template itself, so it is still reaped.
  const owner = process.ppid > 1 ? process.ppid : process.pid
  const path = join(tmpdir(), `${ROOT_PREFIX}template-${key}-${owner}`)
  if (existsSync(path)) return join(path, 'data')
  // The build directory is a stray like any other if this process dies mid-build.
  const build = mkdtempSync(join(tmpdir(), ROOT_PREFIX))
  try {
    writeFileSync(join(build, 'owner.pid'), String(process.pid))
    const staged = join(build, 'template')
    mkdirSync(staged)
    writeFileSync(join(staged, 'owner.pid'), String(owner))
    if (user) {
      chownSync(build, user.uid, user.gid)
      chownSync(staged, user.uid, user.gid)
    }
    run(join(bin, 'initdb'), ['-D', join(staged, 'data'), ...INITDB_ARGS], user)
    try {
      renameSync(staged, path)
    } catch (e) {
      // Another worker's template got there first (ENOTEMPTY or EEXIST): it is as good as ours.
      if (!existsSync(path)) throw e
    }
  } finally {
    rmSync(build, { recursive: true, force: true })
  }
  return join(path, 'data')
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

const live = new Set<TestCluster>()
let exitHook = false

/** Starts a cluster; `stop()` it when done (an exiting process stops the ones it left running). */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestCluster> {
  const bin = postgresBin()
  const user = runAs()
  reapStrays(bin, user)
  const dir = mkdtempSync(join(tmpdir(), ROOT_PREFIX))
  writeFileSync(join(dir, 'owner.pid'), String(process.pid))
  const data = join(dir, 'data')
  const sock = join(dir, 'sock')
  mkdirSync(sock)
  if (user) {
    chownSync(dir, user.uid, user.gid)
    chownSync(sock, user.uid, user.gid)
  }
  // `cp -a` keeps the owner (the `postgres` user when root) and the 0700 mode PostgreSQL demands.
  execFileSync('cp', ['-a', template(bin, user), data])
  const port = await freePort()
  // Tests run fsync-free: a test cluster trades durability across power cuts for speed (a crash
  // of the server process, `-m immediate`, still loses nothing committed). Benchmarks ask for
  // `durable`: PostgreSQL's defaults, flushing at commit as the file storage does, so the two
  // are compared on the same guarantee.
  const fast = options.durable ? '' : ' -c fsync=off -c full_page_writes=off'
  const opts = `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1${fast} -c max_connections=200`
  run(join(bin, 'pg_ctl'), ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], user)
  const url = (db: string): string => `postgres://${USER}@127.0.0.1:${port}/${db}`
  let n = 0
  let stopped = false
  const cluster: TestCluster = {
    port,
    dir,
    async createDatabase(name = `t${process.pid}_${++n}`) {
      await cluster.query(`CREATE DATABASE ${name}`)
      return url(name)
    },
    restart(mode = 'fast') {
      run(
        join(bin, 'pg_ctl'),
        ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-m', mode, '-w', '-t', '60', 'restart'],
        user,
      )
    },
    async query(sql, params, database = 'postgres') {
      const client = new pg.Client({ connectionString: url(database) })
      await client.connect()
      try {
        return await client.query(sql, params)
      } finally {
        await client.end()
      }
    },
    stop() {
      if (stopped) return
      stopped = true
      live.delete(cluster)
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], user)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
  live.add(cluster)
  if (!exitHook) {
    exitHook = true
    process.once('exit', () => {
      for (const c of [...live]) c.stop()
    })
  }
  return cluster
}
