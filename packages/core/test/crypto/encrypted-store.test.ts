import { describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { createStore, memoryStorage, SessionError, type Storage, type Store } from '../../src/index.js'
import { hostOf } from '../../src/host.js'
import { encodeBase64 } from '../../src/util/bytes.js'

// `createStore({ encryption })` over the memory storage (both ways it serves heads: all at open,
// and paged as IndexedDB does): what the storage holds is sealed, what the store answers is the
// plaintext, and the keys come and go with lock, unlock and passphrase changes. The same in
// Chromium over IndexedDB: encrypted-store.browser.test.ts.

const MARK = 'Zq7marker'
const passphrase = 'correct horse battery staple'

/** Everything the storage holds, as text (heads, entries, side records) and attachment bytes. */
async function raw(storage: Storage): Promise<{ text: string; bytes: Uint8Array[] }> {
  const heads = storage.paged
    ? await storage.paged.page({ order: 'created_asc', limit: 1000 })
    : await storage.open()
  const parts: unknown[] = [heads]
  const bytes: Uint8Array[] = []
  for (const h of heads) {
    parts.push(await storage.entries(h.meta.session_id))
    for (const a of h.attachments ?? []) {
      const b = await storage.attachmentBytes?.(h.meta.session_id, a.attachment_id)
      if (b) bytes.push(new Uint8Array(await b.arrayBuffer()))
    }
  }
  for (const store of ['kv', 'outbox']) parts.push(await storage.sideRecords?.(store))
  // Bytes anywhere in a record (an entry's box is bytes at rest) are scanned as bytes.
  const text = JSON.stringify(parts, (_key, v: unknown) =>
    v instanceof ArrayBuffer ? (bytes.push(new Uint8Array(v)), '[bytes]') : v,
  )
  return { text, bytes }
}

const holdsMark = (r: { text: string; bytes: Uint8Array[] }): boolean =>
  r.text.includes(MARK) || r.bytes.some((b) => new TextDecoder().decode(b).includes(MARK))

async function fill(store: Store): Promise<{ session_id: string; entry_id: string; attachment_id: string }> {
  const { session_id } = await store.create({
    title: `title ${MARK}`,
    metadata: { owner: 'alice', note: MARK },
  })
  const { entry_id } = await store.append({
    session_id,
    message: { role: 'user', content: [{ type: 'text', text: `hello ${MARK}` }], timestamp: 1 },
  })
  const file = new Blob([`bytes of ${MARK}`], { type: 'text/plain' })
  const { attachment } = await store.putAttachment({ session_id, name: `${MARK}.txt`, file })
  const attachment_id = attachment.attachment_id
  await store.setDraft({ session_id, draft: `draft ${MARK}`, attachment_ids: [attachment_id] })
  await store.flush()
  return { session_id, entry_id, attachment_id }
}

const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
  } catch (e) {
    return e instanceof SessionError ? e.code : String(e)
  }
  return 'resolved'
}

for (const paged of [false, true]) {
  describe(`an encrypted store over memory storage${paged ? ' (paged heads)' : ''}`, () => {
    it('holds no byte of what was written, and answers it in clear', async () => {
      const inner = memoryStorage({ paged })
      const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      const { session_id, entry_id, attachment_id } = await fill(store)
      expect(holdsMark(await raw(inner))).toBe(false)
      expect(hostOf(store).keyring).not.toBeNull()
      await store.close()

      const again = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      const got = await again.get({ session_id })
      expect(got!.meta.title).toBe(`title ${MARK}`)
      expect(got!.meta.draft).toBe(`draft ${MARK}`)
      expect(got!.meta.metadata).toEqual({ owner: 'alice', note: MARK })
      const m = await again.getMessage({ session_id, entry_id })
      expect(JSON.stringify(m)).toContain(`hello ${MARK}`)
      const blob = await again.getAttachmentBlob(session_id, attachment_id)
      expect(await blob!.text()).toBe(`bytes of ${MARK}`)
      // A second write on the session keeps the storage sealed.
      await again.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: `again ${MARK}` }], timestamp: 2 },
      })
      await again.setMeta({ session_id, title: `renamed ${MARK}` })
      await again.flush()
      expect(holdsMark(await raw(inner))).toBe(false)
      const list = await again.list()
      expect(list.sessions.map((s) => s.title)).toEqual([`renamed ${MARK}`])
      await again.close()
    })

    it('a wrong passphrase decrypts nothing and writes nothing', async () => {
      const inner = memoryStorage({ paged })
      const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      await fill(store)
      await store.close()
      const before = (await raw(inner)).text
      expect(
        await code(createStore({ storage: inner, multiTab: false, encryption: { passphrase: 'wrong' } })),
      ).toBe('session/wrong_passphrase')
      expect((await raw(inner)).text).toBe(before)
    })

    it('lock drops the keys and plaintext; unlock and a passphrase change bring them back', async () => {
      const inner = memoryStorage({ paged })
      const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      const { session_id, entry_id } = await fill(store)
      await store.lock()
      expect(hostOf(store).keyring).toBeNull()
      expect(hostOf(store).has(session_id)).toBe(false)
      expect(await code(store.get({ session_id }))).toBe('session/locked')
      expect(
        await code(store.append({ session_id, message: { role: 'user', content: [], timestamp: 3 } })),
      ).toBe('session/locked')
      expect(await code(store.unlock('wrong'))).toBe('session/wrong_passphrase')
      expect(await code(store.get({ session_id }))).toBe('session/locked')
      await store.unlock(passphrase)
      expect((await store.get({ session_id }))!.meta.title).toBe(`title ${MARK}`)

      expect(await code(store.changePassphrase('wrong', 'next one'))).toBe('session/wrong_passphrase')
      await store.changePassphrase(passphrase, 'next one')
      await store.close()
      expect(await code(createStore({ storage: inner, multiTab: false, encryption: { passphrase } }))).toBe(
        'session/wrong_passphrase',
      )
      const again = await createStore({
        storage: inner,
        multiTab: false,
        encryption: { passphrase: 'next one' },
      })
      expect(JSON.stringify(await again.getMessage({ session_id, entry_id }))).toContain(MARK)
      await again.close()
    })

    it('keeps entry boxes as bytes at rest, and reads boxes kept as base64 text before', async () => {
      const inner = memoryStorage({ paged })
      const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      const { session_id, entry_id } = await fill(store)
      const custom = await store.append({ session_id, custom: { custom_type: 'note', data: { mark: MARK } } })
      const before = await store.get({ session_id })
      await store.close()
      const stored = (await inner.entries(session_id)) as unknown as Array<{ box: unknown }>
      expect(stored.length).toBe(2)
      for (const r of stored) expect(r.box).toBeInstanceOf(ArrayBuffer)
      // A database written when boxes were base64 text: the same ciphertext, as text.
      for (const r of stored) r.box = encodeBase64(new Uint8Array(r.box as ArrayBuffer))
      const again = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      expect(await again.get({ session_id })).toEqual(before)
      expect(JSON.stringify(await again.getMessage({ session_id, entry_id }))).toContain(`hello ${MARK}`)
      expect(await firstValueFrom(again.entry$(session_id, custom.entry_id))).toMatchObject({
        custom_type: 'note',
        data: { mark: MARK },
      })
      // Written again (an edit), an entry's box is bytes once more.
      await again.updateMessage({
        session_id,
        entry_id,
        content: [{ type: 'text', text: `edited ${MARK}` }],
      })
      await again.close()
      const after = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: unknown }>
      expect(after.find((r) => r.id === entry_id)!.box).toBeInstanceOf(ArrayBuffer)
      expect(typeof after.find((r) => r.id === custom.entry_id)!.box).toBe('string')
    })

    it('refuses records swapped or altered on disk with session/integrity', async () => {
      const inner = memoryStorage({ paged })
      const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      const { session_id } = await fill(store)
      const second = await store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: 'other' }], timestamp: 2 },
      })
      await store.close()
      // Swap the boxes of two entries on disk.
      const stored = (await inner.entries(session_id)) as unknown as Array<{ id: string; box: ArrayBuffer }>
      const [a, b] = stored
      ;[a.box, b.box] = [b.box, a.box]
      const again = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      expect(await code(again.getMessage({ session_id, entry_id: second.entry_id }))).toBe(
        'session/integrity',
      )
      await again.close()
    })

    it('encrypts a clear store in place, resuming after a crash midway', async () => {
      const inner = memoryStorage({ paged })
      const clear = await createStore({ storage: inner, multiTab: false })
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await fill(clear)).session_id)
      await clear.close()
      expect(holdsMark(await raw(inner))).toBe(true)
      // The job stops after the first session, as a crash would.
      const crash = new Error('crash')
      await expect(
        createStore({
          storage: inner,
          multiTab: false,
          encryption: {
            passphrase,
            onEncryptProgress: (n) => {
              if (n === 1) throw crash
            },
          },
        }),
      ).rejects.toBe(crash)
      expect(holdsMark(await raw(inner))).toBe(true)
      const sealedAfterCrash = (await raw(inner)).text.split(`title ${MARK}`).length - 1
      expect(sealedAfterCrash).toBe(2)
      // The next open finishes the job: nothing left in clear, everything still there.
      const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      expect(holdsMark(await raw(inner))).toBe(false)
      for (const session_id of ids) {
        const got = await store.get({ session_id })
        expect(got!.meta.title).toBe(`title ${MARK}`)
        const page = await store.messages({ session_id })
        expect(JSON.stringify(page)).toContain(`hello ${MARK}`)
      }
      await store.close()
    })
  })
}
