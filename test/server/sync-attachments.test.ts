import { createHash, randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createStore, memoryStorage, type SessionTree, type Store } from '@colloquy/core'
import { collectAttachmentIds } from '@colloquy/core/wire'
import { hostOf } from '@colloquy/core/host'
import { createSync, type Sync } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import { deviceStore, encryptedStores } from '../../packages/sync/test/scenario.js'
import { cleanupAfterEach, currentDataBackend, startServer, type ServerProcess } from './helpers.js'

// Attachments through the sync client and a real server process (its file storage here, and
// PostgreSQL through test/postgres/sync-attachments.test.ts): streamed uploads at their place in
// the outbox, the same bytes sent once, bytes fetched on first read.
const { defer } = cleanupAfterEach('sync-attachments')
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

async function device(
  url: string,
  sent: { bytes: number; downloads?: number },
  options: { eagerAttachments?: boolean } = {},
): Promise<{ store: Store; sync: Sync }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  // Counts the attachment bytes this device sends, and the attachments it downloads.
  const counting: typeof fetch = (input, init) => {
    const url = String(input)
    if (url.includes('/sync/attachments/') && init?.body instanceof Blob) sent.bytes += init.body.size
    else if (url.includes('/attachments/') && (init?.method ?? 'GET') === 'GET')
      sent.downloads = (sent.downloads ?? 0) + 1
    return fetch(input, init)
  }
  const sync = createSync(store, {
    url,
    token: 'tok-a',
    fetch: counting,
    eagerAttachments: options.eagerAttachments,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
  })
  cleanup.push(
    () => store.close(),
    () => sync.close(),
  )
  sync.start()
  return { store, sync }
}

/** A server on a fresh copy of the current data backend, and what that data holds. */
async function server(): Promise<
  ServerProcess & { contents(session_id: string): Promise<Array<{ sha256: string; bytes: number }>> }
> {
  const data = await currentDataBackend().data()
  defer(() => data.remove())
  const s = await startServer([...data.args, '--no-fsync', '--token', 'alice=tok-a'])
  defer(() => s.stop())
  return Object.assign(s, { contents: (session_id: string) => data.contents(session_id) })
}

describe('sync of attachments with a real server', () => {
  it('a 20 MB attachment round-trips; the same bytes under a second id are not sent again; B reads them on demand', async () => {
    const srv = await server()
    const sentByA = { bytes: 0 }
    const a = await device(srv.url, sentByA)
    const b = await device(srv.url, { bytes: 0 })
    const bytes = new Uint8Array(randomBytes(20 * 1024 * 1024))
    const { session_id } = await a.store.create({ title: 'big file' })
    const one = await a.store.putAttachment({
      session_id,
      file: new File([bytes], 'data.bin', { type: 'application/octet-stream' }),
    })
    const two = await a.store.putAttachment({
      session_id,
      file: new File([bytes], 'copy.bin', { type: 'application/octet-stream' }),
    })
    await a.store.append({
      session_id,
      message: { role: 'user', content: [one.block, two.block], timestamp: 0 },
    })
    await a.sync.flush()
    expect(sentByA.bytes).toBe(bytes.length)
    // On the server: the bytes once for both attachments, in the session's keeping.
    expect(await srv.contents(session_id)).toEqual([{ sha256: sha(bytes), bytes: bytes.length }])

    await b.sync.flush()
    expect(
      (await b.store.listAttachments({ session_id })).attachments.map((x) => x.attachment_id).sort(),
    ).toEqual([one.attachment.attachment_id, two.attachment.attachment_id].sort())
    const got = await b.store.getAttachmentBlob(session_id, two.attachment.attachment_id)
    expect(got!.size).toBe(bytes.length)
    expect(sha(new Uint8Array(await got!.arrayBuffer()))).toBe(sha(bytes))
    expect((await b.store.messages({ session_id })).messages[0].message!.content).toEqual([
      one.block,
      two.block,
    ])

    // A fork copies the attachments under the same ids: its upload reuses the source's bytes.
    const [first] = (await a.store.messages({ session_id })).messages
    const fork = await a.store.fork({ session_id, entry_id: first.entry_id })
    await a.sync.flush()
    expect(sentByA.bytes).toBe(bytes.length)
    await b.sync.flush()
    const copy = await b.store.getAttachmentBlob(fork.session_id, one.attachment.attachment_id)
    expect(sha(new Uint8Array(await copy!.arrayBuffer()))).toBe(sha(bytes))
    expect(await srv.contents(fork.session_id)).toEqual([{ sha256: sha(bytes), bytes: bytes.length }])
  }, 120_000)
})

describe('eagerAttachments with a real server', () => {
  it('B downloads each attachment it pulls before flush() returns, once, and reads them with the server stopped', async () => {
    const srv = await server()
    const a = await device(srv.url, { bytes: 0 })
    const { session_id } = await a.store.create({ title: 'for the plane' })
    const files = [randomBytes(3000), randomBytes(70_000)].map((b) => new Uint8Array(b))
    const put = []
    for (const [i, bytes] of files.entries())
      put.push(await a.store.putAttachment({ session_id, file: new File([bytes], `f${i}.bin`) }))
    await a.sync.flush()
    const seen = { bytes: 0, downloads: 0 }
    const b = await device(srv.url, seen, { eagerAttachments: true })
    await b.sync.flush()
    expect(seen.downloads).toBe(2)
    // A later put: only the new attachment is downloaded.
    const third = await a.store.putAttachment({ session_id, file: new File([files[0]], 'again.bin') })
    await a.sync.flush()
    await b.sync.flush()
    expect(seen.downloads).toBe(3)
    await srv.stop()
    const expected = [files[0], files[1], files[0]]
    for (const [i, { attachment }] of [...put, third].entries()) {
      const got = await b.store.getAttachmentBlob(session_id, attachment.attachment_id)
      expect(sha(new Uint8Array(await got!.arrayBuffer()))).toBe(sha(expected[i]))
    }
    expect(seen.downloads).toBe(3)
  }, 60_000)
})

describe('sealed uploads through a real server', () => {
  it('a store encrypted at rest with the keys sync seals with uploads its bytes as kept: the server holds those very bytes', async () => {
    const srv = await server()
    const sealed = await encryptedStores()
    const store = await deviceStore(sealed, memoryStorage())
    const sync = createSync(store, {
      url: srv.url,
      token: 'tok-a',
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    })
    cleanup.push(
      () => store.close(),
      () => sync.close(),
    )
    sync.start()
    const { session_id } = await store.create({})
    const { attachment } = await store.putAttachment({
      session_id,
      file: new File([new Uint8Array(randomBytes(3 * 2 ** 18))], 'three.bin'),
    })
    await sync.flush()
    const atRest = await hostOf(store).sealedAttachmentBytes(session_id, attachment.attachment_id)
    const kept = new Uint8Array(await atRest!.arrayBuffer())
    expect(await srv.contents(session_id)).toEqual([{ sha256: sha(kept), bytes: kept.length }])
  })

  it('a body that is not the bytes its size and sha256 name is refused (4xx) and nothing is stored; the same upload with its own sha256 is kept', async () => {
    const srv = await server()
    const a = await device(srv.url, { bytes: 0 })
    const { session_id } = await a.store.create({})
    await a.sync.flush()
    const body = new Uint8Array(randomBytes(5000))
    const other = body.slice()
    other[4999] ^= 1
    const post = (sha256: string): Promise<Response> =>
      fetch(
        `${srv.url}/sync/attachments/${session_id}/a_sent?name=&box=x&size=${body.length}&sha256=${sha256}&created_at=1`,
        {
          method: 'POST',
          headers: { authorization: 'Bearer tok-a', 'content-type': 'application/octet-stream' },
          body,
        },
      )
    const refused = await post(sha(other))
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('session/invalid_request')
    expect(await srv.contents(session_id)).toEqual([])
    const kept = await post(sha(body))
    expect(kept.status, await kept.clone().text()).toBe(200)
    expect(await srv.contents(session_id)).toEqual([{ sha256: sha(body), bytes: body.length }])
  })
})

/**
 * Watches device B for a message whose attachment is not there: after every page or stream batch
 * it applies (before the next one can start), and at every emission of its live queries.
 */
function watchDangling(
  store: Store,
  session_id: string,
): { dangling: string[]; seen: number; stop: () => void; checked: () => Promise<void> } {
  // Live-query checks scheduled and not yet run, and who waits for them.
  let pending = 0
  const idle: Array<() => void> = []
  const out = {
    dangling: [] as string[],
    seen: 0,
    stop: () => {},
    /** Resolves once every check scheduled so far has run. */
    checked: (): Promise<void> =>
      pending === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r)),
  }
  // Every message entry on every branch (a page may hold entries before the leaf reaches them).
  const refs = (tree: SessionTree | null): Array<[string, string]> =>
    [...(tree?.entries.values() ?? [])].flatMap((e) =>
      e.kind === 'message'
        ? [...collectAttachmentIds(e.message.content)].map((id): [string, string] => [e.id, id])
        : [],
    )
  const treeNow = (): Promise<SessionTree | null> =>
    new Promise((resolve) => {
      const sub = store.tree$(session_id).subscribe((t) => {
        resolve(t)
        queueMicrotask(() => sub.unsubscribe())
      })
    })
  const apply = store.applyReplica.bind(store)
  ;(store as { applyReplica: Store['applyReplica'] }).applyReplica = async (...args) => {
    const result = await apply(...args)
    const held = new Set(
      (await store.listAttachments({ session_id }).catch(() => ({ attachments: [] }))).attachments.map(
        (a) => a.attachment_id,
      ),
    )
    for (const [entry, id] of refs(await treeNow()))
      if (!held.has(id)) out.dangling.push(`after a batch: ${entry} → ${id}`)
    return result
  }
  let held: readonly string[] = []
  const a = store
    .attachments$(session_id)
    .subscribe((list) => (held = (list ?? []).map((x) => x.attachment_id)))
  const t = store.tree$(session_id).subscribe((tree) => {
    out.seen++
    // Both queries answer the same commit: let the other one catch up before comparing.
    pending++
    setTimeout(() => {
      try {
        for (const [entry, id] of refs(tree))
          if (!held.includes(id)) out.dangling.push(`live query: ${entry} → ${id}`)
      } finally {
        if (--pending === 0) for (const w of idle.splice(0)) w()
      }
    }, 0)
  })
  out.stop = () => (a.unsubscribe(), t.unsubscribe())
  return out
}

describe('no device applies a message before its attachment', () => {
  async function writeAlternating(
    a: { store: Store; sync: Sync },
    session_id: string,
    n: number,
    flushEach: boolean,
  ): Promise<void> {
    for (let i = 0; i < n; i++) {
      const { block } = await a.store.putAttachment({
        session_id,
        file: new File([`image ${i}`], `shot-${i}.png`, { type: 'image/png' }),
      })
      if (flushEach) await a.sync.flush()
      await a.store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: `m${i}` }, block], timestamp: i },
      })
      if (flushEach) await a.sync.flush()
    }
    await a.sync.flush()
  }

  it('pulled in pages of one change, each message comes after its attachment on device B', async () => {
    const srv = await server()
    const a = await device(srv.url, { bytes: 0 })
    const { session_id } = await a.store.create({ title: 'screenshots' })
    await writeAlternating(a, session_id, 5, true)

    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const watch = watchDangling(store, session_id)
    const sync = createSync(store, {
      url: srv.url,
      token: 'tok-a',
      pullLimit: 1,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    })
    cleanup.push(
      () => store.close(),
      () => sync.close(),
      () => watch.stop(),
    )
    sync.start()
    await sync.flush()
    await watch.checked()
    expect(watch.dangling).toEqual([])
    expect(watch.seen).toBeGreaterThan(1)
    expect((await store.messages({ session_id })).messages).toHaveLength(5)
    expect((await store.listAttachments({ session_id })).attachments).toHaveLength(5)

    // A deleted attachment replicates as its own change; the pages stay in order after it.
    const spare = await a.store.putAttachment({
      session_id,
      file: new File(['spare'], 'spare.txt', { type: 'text/plain' }),
    })
    await a.store.deleteAttachment({ session_id, attachment_id: spare.attachment.attachment_id })
    await writeAlternating(a, session_id, 2, false)
    await sync.flush()
    await watch.checked()
    expect(watch.dangling).toEqual([])
    expect(
      (await store.listAttachments({ session_id })).attachments.map((x) => x.attachment_id),
    ).not.toContain(spare.attachment.attachment_id)
    expect((await store.messages({ session_id })).messages).toHaveLength(7)
  }, 60_000)

  it('on the live stream, device B never holds a message before its attachment', async () => {
    const srv = await server()
    const a = await device(srv.url, { bytes: 0 })
    const { session_id } = await a.store.create({ title: 'live' })
    await a.sync.flush()
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, {
      url: srv.url,
      token: 'tok-a',
      pullLimit: 2,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    })
    cleanup.push(
      () => store.close(),
      () => sync.close(),
    )
    sync.start()
    await sync.flush()
    const watch = watchDangling(store, session_id)
    cleanup.push(() => watch.stop())
    await writeAlternating(a, session_id, 4, true)
    await writeAlternating(a, session_id, 3, false)
    await a.sync.flush()
    await sync.flush()
    await watch.checked()
    expect(watch.dangling).toEqual([])
    expect((await store.messages({ session_id })).messages).toHaveLength(7)
    expect((await store.listAttachments({ session_id })).attachments).toHaveLength(7)
  }, 60_000)
})

describe('draft chips through a real server', () => {
  it('a draft typed offline with pasted chips reaches the other device after the bytes, and clearing it there clears it here', async () => {
    const srv = await server()
    const a = await device(srv.url, { bytes: 0 })
    const { session_id } = await a.store.create({ title: 'composer' })
    await a.sync.flush()
    const b = await device(srv.url, { bytes: 0 })
    await b.sync.flush()
    // B's draft never names an attachment B does not hold, at any emission.
    const dangling: string[] = []
    const checks: Array<Promise<void>> = []
    let chipsOnB: string[] = []
    const sub = b.store.draft$(session_id).subscribe((d) => {
      const ids = (d?.attachments ?? []).map((x) => x.attachment_id)
      chipsOnB = ids
      checks.push(
        b.store.listAttachments({ session_id }).then(({ attachments }) => {
          for (const id of ids) if (!attachments.some((x) => x.attachment_id === id)) dangling.push(id)
        }),
      )
    })
    cleanup.push(() => sub.unsubscribe())

    // Offline on A: text typed first, then two pastes, then the chips: the outbox merges the
    // draft's changes, and the merge must still reach the server after both uploads.
    a.sync.stop()
    await a.store.setDraft({ session_id, draft: 'look at' })
    const shot = new Uint8Array(randomBytes(256 * 1024))
    const one = await a.store.putAttachment({
      session_id,
      file: new File([shot], 'one.png', { type: 'image/png' }),
    })
    const two = await a.store.putAttachment({
      session_id,
      file: new File(['notes'], 'two.txt', { type: 'text/plain' }),
    })
    await a.store.setDraft({
      session_id,
      draft: 'look at these',
      attachment_ids: [one.attachment.attachment_id, two.attachment.attachment_id],
    })
    a.sync.start()
    await a.sync.flush()
    await b.sync.flush()
    // B's draft query has shown the chips, and every emission's check has run.
    await vi.waitFor(() =>
      expect(chipsOnB).toEqual([one.attachment.attachment_id, two.attachment.attachment_id]),
    )
    await Promise.all(checks)

    const res = await fetch(`${srv.url}/rpc/session::get`, {
      method: 'POST',
      headers: { authorization: 'Bearer tok-a', 'content-type': 'application/json' },
      body: JSON.stringify({ session_id }),
    })
    const onServer = (
      (await res.json()) as { meta: { draft?: string; draft_attachments?: Array<{ attachment_id: string }> } }
    ).meta
    expect(onServer.draft).toBe('look at these')
    expect(onServer.draft_attachments?.map((x) => x.attachment_id)).toEqual([
      one.attachment.attachment_id,
      two.attachment.attachment_id,
    ])
    const onB = (await b.store.get({ session_id }))!.meta
    expect(onB.draft).toBe('look at these')
    expect(onB.draft_attachments).toEqual([one.attachment, two.attachment])
    expect(chipsOnB).toEqual([one.attachment.attachment_id, two.attachment.attachment_id])
    expect(
      sha(
        new Uint8Array(
          await (await b.store.getAttachmentBlob(session_id, one.attachment.attachment_id))!.arrayBuffer(),
        ),
      ),
    ).toBe(sha(shot))
    expect(dangling).toEqual([])

    // B removes a chip and sends the message with the other; A's draft follows.
    await b.store.setDraft({ session_id, draft: 'just this', attachment_ids: [two.attachment.attachment_id] })
    await b.sync.flush()
    await a.sync.flush()
    expect((await a.store.get({ session_id }))!.meta.draft_attachments?.map((x) => x.attachment_id)).toEqual([
      two.attachment.attachment_id,
    ])
    await b.store.setDraft({ session_id, draft: null, attachment_ids: [] })
    await b.sync.flush()
    await a.sync.flush()
    const cleared = (await a.store.get({ session_id }))!.meta
    expect(cleared.draft).toBeUndefined()
    expect(cleared.draft_attachments).toBeUndefined()
  }, 60_000)
})
