import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../conformance/http-process.js'

// An upload is spooled to a folder in the temporary directory, removed once the upload settles.
// A crash skips that: the next server to start removes what dead processes left, and leaves the
// spools of live ones (another server on the machine) alone.

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A server whose temporary directory is `spool` (inherited from the environment at spawn). */
async function serve(spool: string, data: string): Promise<ServerProcess> {
  const was = process.env.TMPDIR
  process.env.TMPDIR = spool
  try {
    const server = await startServer(['--data-dir', data])
    cleanups.push(() => server.stop())
    return server
  } finally {
    if (was === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = was
  }
}

const spools = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.startsWith('colloquy-upload-')).sort()

describe('upload spools', () => {
  it("a server killed mid-upload leaves its spool; the next start removes it and keeps a live process's", async () => {
    const spool = await mkdtemp(join(tmpdir(), 'colloquy-spools-'))
    const data = await mkdtemp(join(tmpdir(), 'colloquy-spools-data-'))
    cleanups.push(
      () => rm(spool, { recursive: true, force: true }),
      () => rm(data, { recursive: true, force: true }),
    )
    const first = await serve(spool, data)
    const created = await fetch(`${first.url}/rpc/session::create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    const { session_id } = (await created.json()) as { session_id: string }
    // An upload that never finishes: its spool is made, then the server dies under it.
    const u = new URL(`/attachments/${encodeURIComponent(session_id)}?name=big.bin`, first.url)
    const req = request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(8 << 20) },
    })
    req.on('error', () => {})
    req.write(Buffer.alloc(64 * 1024, 1))
    while ((await spools(spool)).length === 0) await new Promise((r) => setTimeout(r, 10))
    const left = await spools(spool)
    expect(left).toHaveLength(1)
    expect(left[0]).toMatch(new RegExp(`^colloquy-upload-${first.child.pid}-`))
    await first.stop('SIGKILL')
    req.destroy()
    expect(await spools(spool)).toStrictEqual(left)

    // This test's own process is alive: a spool named after it is not a dead one's.
    const live = `colloquy-upload-${process.pid}-live`
    await mkdtemp(join(spool, live))
    const kept = (await spools(spool)).filter((n) => n.startsWith(live))
    await serve(spool, data)
    expect(await spools(spool)).toStrictEqual(kept)
  })
})
