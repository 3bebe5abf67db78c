import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ViteDevServer } from 'vite'
import { launchEngine, type EngineBrowser, type EnginePage as Page } from '../support/engines.js'
import { servePage } from '../support/page-server.js'
import {
  currentDataBackend,
  holdsMarker,
  startServer,
  type KeptData,
  type ServerProcess,
} from '../server/helpers.js'
import { call, inStore } from './device-calls.js'

// The marker through every path at once, in Chromium: a marker title, description, metadata
// value, message, draft and attachment (name and bytes) written in tab A of a device, relayed to
// tab B of the same device (BroadcastChannel; B is the tab that replicates, so it pushes what A
// wrote), synced through a real server process (its file storage here, PostgreSQL through
// test/postgres/sealed-marker.test.ts) to a second device, which reads it all back. Encrypted, no
// record of either device's IndexedDB and nothing the server stores (its data directory, or a
// `pg_dump`) holds the marker; the same run in clear finds it in each of them, so every scan can fail.

const root = new URL('../..', import.meta.url).pathname
const token = 'tok-alice'
const PASSPHRASE = 'correct horse battery staple'

let vite: ViteDevServer
let pageUrl: string
let browser: EngineBrowser

beforeAll(async () => {
  ;({ url: pageUrl, vite } = await servePage(join(root, 'test/sync/page')))
  browser = await launchEngine('chromium')
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await vite?.close()
})

describe.each(['encrypted', 'clear'] as const)(
  `a marker through relay and sync (${currentDataBackend().name}, %s)`,
  (mode) => {
    const passphrase = mode === 'encrypted' ? PASSPHRASE : undefined
    // One per mode, so each scan sees only what its own devices wrote.
    const MARK = `${mode}-quagga-marker-7c3e`
    let data: KeptData
    let server: ServerProcess
    beforeAll(async () => {
      data = await currentDataBackend().data()
      server = await startServer([...data.args, '--no-fsync', '--token', `alice=${token}`, '--origin', '*'])
    }, 120_000)
    afterAll(async () => {
      await server?.stop()
      await data?.remove()
    })

    it(`leaves ${mode === 'encrypted' ? 'no byte of the marker' : 'the marker'} in both devices' IndexedDB records and in what the server stores`, async () => {
      const tab = async (context: Awaited<ReturnType<EngineBrowser['newContext']>>): Promise<Page> => {
        const page = await context.newPage()
        await page.goto(pageUrl)
        await page.waitForFunction(() => 'device' in window)
        await call(page, 'open', server.url, token, passphrase)
        return page
      }
      const one = await browser.newContext()
      const two = await browser.newContext()
      try {
        // Device one: B opens first and replicates; A is the tab the user writes in.
        const b = await tab(one)
        await call(b, 'leading')
        const a = await tab(one)
        const written = await inStore<{ session_id: string; entry_id: string; attachment_id: string }>(
          a,
          `
        const M = arg
        const { session_id } = await s.create({ title: M + ' title', description: M + ' description', metadata: { topic: M } })
        const put = await s.putAttachment({ session_id, file: new File([M + ' attachment bytes'], M + '.txt', { type: 'text/plain' }) })
        const { entry_id } = await s.append({ session_id, message: { role: 'user', content: [{ type: 'text', text: M + ' message' }, put.block], timestamp: 1 } })
        await s.setDraft({ session_id, draft: M + ' draft', attachment_ids: [put.attachment.attachment_id] })
        return { session_id, entry_id, attachment_id: put.attachment.attachment_id }`,
          MARK,
        )
        // Relayed: B's live query shows A's message (from the relay, not from the server: B pushes it).
        const relayed = await inStore<string>(
          b,
          `
        return await new Promise((resolve) => {
          const sub = s.messages$({ session_id: arg.session_id }).subscribe((items) => {
            const item = items.find((i) => i.entry_id === arg.entry_id)
            if (item) { resolve(JSON.stringify(item)); queueMicrotask(() => sub.unsubscribe()) }
          })
        })`,
          written,
        )
        expect(relayed).toContain(`${MARK} message`)
        await call(b, 'flush')
        await call(a, 'flush')

        // Device two: the same passphrase (the keyring the server keeps), everything back in clear.
        const d = await tab(two)
        await call(d, 'flush')
        const read = await inStore<{
          title: string
          draft: string
          text: string
          bytes: string
          name: string
        }>(
          d,
          `
        const { meta } = await s.get({ session_id: arg.session_id })
        const { entry } = await s.getMessage({ session_id: arg.session_id, entry_id: arg.entry_id })
        const blob = await s.getAttachmentBlob(arg.session_id, arg.attachment_id)
        const [att] = (await s.listAttachments({ session_id: arg.session_id })).attachments
        return { title: meta.title, draft: meta.draft, text: entry.message.content[0].text, bytes: await blob.text(), name: att.name }`,
          written,
        )
        expect(read).toEqual({
          title: `${MARK} title`,
          draft: `${MARK} draft`,
          text: `${MARK} message`,
          bytes: `${MARK} attachment bytes`,
          name: `${MARK}.txt`,
        })
        await call(d, 'flush')

        const scans = {
          'device one': [Buffer.from(await call<string>(a, 'raw'))],
          'device two': [Buffer.from(await call<string>(d, 'raw'))],
          server: await data.raw(),
        }
        const found = Object.fromEntries(
          Object.entries(scans).map(([where, raw]) => [where, holdsMarker(raw, MARK)]),
        )
        const everywhere = mode === 'clear'
        expect(found).toEqual({ 'device one': everywhere, 'device two': everywhere, server: everywhere })
        // In clear, the scan sees attachment bytes where they are kept (a file, a bytea column).
        if (mode === 'clear') expect(holdsMarker(scans.server, `${MARK} attachment bytes`)).toBe(true)
      } finally {
        await one.close()
        await two.close()
      }
    })
  },
)
