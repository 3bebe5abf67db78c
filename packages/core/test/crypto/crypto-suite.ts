import { beforeAll, describe, expect, it } from 'vitest'
import { SessionError, type SessionEntry, type SessionErrorCode } from '../../src/index.js'
import { decodeBase64, encodeBase64 } from '../../src/wire.js'
import {
  Keyring,
  MIN_BUCKET,
  bucketOf,
  SEALED_METADATA_KEY,
  keyIdOf,
  olderMetaFields,
  openAttachmentBytes,
  openAttachmentMeta,
  openEntry,
  openMeta,
  sealAttachmentBytes,
  sealAttachmentMeta,
  sealEntry,
  sealMeta,
  type SealedEntry,
  type SealedMeta,
} from '../../src/crypto/index.js'
import { CLEAR_KEYS, MARKER, SESSION, attachment, attachmentBytes, entries, meta } from './samples.js'

// The crypto foundation's behaviour, run in Node (its webcrypto) and in Chromium (the page's):
// the same Web Crypto calls must hold in both.

const policy = { clearMetadataKeys: CLEAR_KEYS }
const PASS = 'correct horse battery staple'

/** What storage or the wire hands back: JSON, nothing kept by reference. */
const stored = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T

async function refused(p: Promise<unknown>, code: SessionErrorCode): Promise<SessionError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  )
  expect(e, `expected a ${code}`).toBeInstanceOf(SessionError)
  expect((e as SessionError).code).toBe(code)
  return e as SessionError
}

const contains = (hay: Uint8Array, needle: Uint8Array): boolean => {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    return true
  }
  return false
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i])

export function cryptoSuite(): void {
  let ring: Keyring
  let sealedEntries: Array<SealedEntry & { box: string }>
  let sealedMeta: SealedMeta

  beforeAll(async () => {
    ring = await Keyring.create({ passphrase: PASS })
    sealedEntries = await Promise.all(entries.map((e) => sealEntry(ring, SESSION, e)))
    sealedMeta = await sealMeta(ring, meta, { policy })
  })

  describe('round trips', () => {
    it('opens every entry kind as it was sealed, through JSON', async () => {
      for (const [i, e] of entries.entries()) {
        expect(await openEntry(ring, SESSION, stored(sealedEntries[i]))).toEqual(e)
      }
    })

    it('keeps the tree clear and seals the rest of an entry', () => {
      const [user, assistant, , , custom] = sealedEntries
      expect(user).toMatchObject({
        id: 'e_user',
        parent_id: null,
        kind: 'message',
        role: 'user',
        revision: 0,
      })
      expect(user).toMatchObject({ attachment_ids: ['a_img', 'a_1'] })
      expect(assistant).toMatchObject({ parent_id: 'e_user', role: 'assistant', revision: 3 })
      expect(Object.keys(custom).sort()).toEqual(['box', 'id', 'kind', 'parent_id', 'revision', 'timestamp'])
    })

    it('opens a meta with its clear metadata keys, drafts and chips', async () => {
      expect(await openMeta(ring, stored(sealedMeta), policy)).toEqual(meta)
      expect(sealedMeta.metadata!.owner).toBe(meta.metadata!.owner)
      expect(Object.keys(sealedMeta.metadata!).sort()).toEqual([SEALED_METADATA_KEY, 'owner'])
    })

    it('opens a meta without optional fields', async () => {
      const bare = { ...meta }
      for (const k of ['status_reason', 'metadata', 'forked_from', 'draft', 'draft_attachments'] as const)
        delete bare[k]
      expect(await openMeta(ring, stored(await sealMeta(ring, bare)))).toEqual(bare)
    })

    it('opens attachment metadata and bytes, empty and 1 MB too', async () => {
      const m = await sealAttachmentMeta(ring, attachment)
      expect(await openAttachmentMeta(ring, stored(m))).toEqual(attachment)
      const sealed = await sealAttachmentBytes(ring, SESSION, 'a_1', attachmentBytes)
      expect(await openAttachmentBytes(ring, SESSION, 'a_1', sealed, attachment)).toEqual(attachmentBytes)
      const big = new Uint8Array(1 << 20).map((_, i) => i * 7)
      const bigSealed = await sealAttachmentBytes(ring, SESSION, 'a_big', big)
      // Compared by a loop: a deep equality of a megabyte reports element by element, for seconds.
      expect(sameBytes(await openAttachmentBytes(ring, SESSION, 'a_big', bigSealed), big)).toBe(true)
      const empty = await sealAttachmentBytes(ring, SESSION, 'a_0', new Uint8Array(0))
      expect((await openAttachmentBytes(ring, SESSION, 'a_0', empty)).length).toBe(0)
    })
  })

  describe('keys', () => {
    it('a wrong passphrase opens no keyring, and another keyring opens nothing sealed', async () => {
      await refused(
        Keyring.open(ring.serialize(), { passphrase: 'correct horse battery stapler' }),
        'session/wrong_passphrase',
      )
      const other = await Keyring.create({ passphrase: PASS })
      const e = await refused(openEntry(other, SESSION, sealedEntries[0]), 'session/integrity')
      expect(e.message).toMatch(/does not hold/)
      await refused(openMeta(other, sealedMeta, policy), 'session/integrity')
    })

    it('holds data keys only as non-extractable CryptoKeys', async () => {
      const key = ring.keyFor(ring.currentKeyId)!
      expect(key.extractable).toBe(false)
      await expect(crypto.subtle.exportKey('raw', key)).rejects.toThrow()
      const reopened = await Keyring.open(stored(ring.serialize()), { passphrase: PASS })
      expect(reopened.keyFor(reopened.currentKeyId)!.extractable).toBe(false)
    })

    it('serializes wrapped keys, salt and parameters only', () => {
      const s = ring.serialize()
      expect(Object.keys(s).sort()).toEqual(['format', 'kdf', 'keys', 'version'])
      expect(s.kdf).toMatchObject({ name: 'PBKDF2', hash: 'SHA-256', iterations: 600_000 })
      expect(decodeBase64(s.kdf!.salt)!.length).toBe(16)
      expect(s.keys.map((k) => Object.keys(k).sort())).toEqual([['id', 'seq', 'wrapped']])
    })

    it('the serialized keyring holds no usable key: no 32 bytes of it open a sealed value', async () => {
      const sealed = decodeBase64(sealedEntries[4].box)!
      const n = sealed[1]
      const iv = sealed.slice(2 + n, 14 + n)
      const body = sealed.slice(14 + n)
      const e = entries[4]
      const aad = ['entry', SESSION, e.id, 0, [e.parent_id, 'custom', null, e.timestamp, []]]
      const additionalData = new TextEncoder().encode(
        JSON.stringify(['colloquy', 1, ring.currentKeyId, ...aad]),
      )
      const opens = (key: CryptoKey): Promise<boolean> =>
        crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData }, key, body).then(
          () => true,
          () => false,
        )
      // The real key opens it this way, so each attempt below could succeed.
      expect(await opens(ring.keyFor(ring.currentKeyId)!)).toBe(true)
      const text = JSON.stringify(ring.serialize())
      const blobs = [...text.matchAll(/"(?:wrapped|salt)":"([^"]+)"/g)].map((x) => decodeBase64(x[1])!)
      let tried = 0
      for (const blob of blobs) {
        for (let at = 0; at + 32 <= blob.length; at++) {
          const key = await crypto.subtle.importKey('raw', blob.slice(at, at + 32), 'AES-GCM', false, [
            'decrypt',
          ])
          expect(await opens(key), `32 bytes at ${at} of the serialized keyring`).toBe(false)
          tried++
        }
      }
      expect(tried).toBe(60 - 32 + 1)
    })

    it('a passphrase change re-wraps the keys only: sealed records stay as they are and open', async () => {
      const mine = await Keyring.create({ passphrase: PASS })
      const before = stored(await sealEntry(mine, SESSION, entries[1]))
      const wrappedBefore = mine.serialize()
      await refused(
        mine.changePassphrase({ passphrase: 'not it' }, { passphrase: 'new one' }),
        'session/wrong_passphrase',
      )
      expect(mine.serialize()).toEqual(wrappedBefore)
      await mine.changePassphrase({ passphrase: PASS }, { passphrase: 'new one' })
      const after = mine.serialize()
      expect(after.keys.map((k) => k.id)).toEqual(wrappedBefore.keys.map((k) => k.id))
      expect(after.kdf!.salt).not.toBe(wrappedBefore.kdf!.salt)
      expect(after.keys[0].wrapped).not.toBe(wrappedBefore.keys[0].wrapped)
      // The same sealed record, untouched, opens on a device that knows only the new passphrase.
      const device = await Keyring.open(stored(after), { passphrase: 'new one' })
      expect(await openEntry(device, SESSION, before)).toEqual(entries[1])
      await refused(Keyring.open(stored(after), { passphrase: PASS }), 'session/wrong_passphrase')
    })

    it('an app-held key opens a keyring, and can be traded for a passphrase', async () => {
      const kek = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [
        'wrapKey',
        'unwrapKey',
      ])
      const mine = await Keyring.create({ key: kek })
      expect(mine.serialize().kdf).toBeNull()
      const sealed = stored(await sealEntry(mine, SESSION, entries[0]))
      const again = await Keyring.open(mine.serialize(), { key: kek })
      expect(await openEntry(again, SESSION, sealed)).toEqual(entries[0])
      const wrongKek = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [
        'wrapKey',
        'unwrapKey',
      ])
      await refused(Keyring.open(mine.serialize(), { key: wrongKek }), 'session/wrong_passphrase')
      await refused(Keyring.open(mine.serialize(), { passphrase: PASS }), 'session/invalid_request')
      await mine.changePassphrase({ key: kek }, { passphrase: PASS })
      const byPass = await Keyring.open(mine.serialize(), { passphrase: PASS })
      expect(await openEntry(byPass, SESSION, sealed)).toEqual(entries[0])
    })

    it('rotation seals new values under a new key; old ones still open', async () => {
      const mine = await Keyring.create({ passphrase: PASS })
      const first = mine.currentKeyId
      const old = stored(await sealEntry(mine, SESSION, entries[0]))
      const next = await mine.rotate()
      expect(next).not.toBe(first)
      expect(mine.currentKeyId).toBe(next)
      const fresh = stored(await sealEntry(mine, SESSION, entries[1]))
      expect(keyIdOf(old.box)).toBe(first)
      expect(keyIdOf(fresh.box)).toBe(next)
      const device = await Keyring.open(stored(mine.serialize()), { passphrase: PASS })
      expect(device.keyIds).toEqual([first, next])
      expect(await openEntry(device, SESSION, old)).toEqual(entries[0])
      expect(await openEntry(device, SESSION, fresh)).toEqual(entries[1])
    })

    it('rotations and secret changes issued at once all land in the stored keyring', async () => {
      // App-held keys: no derivation, so the calls overlap where they rewrite the stored list.
      const kek = (): Promise<CryptoKey> =>
        crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['wrapKey', 'unwrapKey'])
      const [k1, k2, k3] = await Promise.all([kek(), kek(), kek()])
      const mine = await Keyring.create({ key: k1 })
      const [, rotated, , last] = await Promise.all([
        mine.changePassphrase({ key: k1 }, { key: k2 }),
        mine.rotate(),
        mine.changePassphrase({ key: k2 }, { key: k3 }),
        mine.rotate(),
      ])
      const device = await Keyring.open(stored(mine.serialize()), { key: k3 })
      expect(device.keyIds).toHaveLength(3)
      expect(device.has(rotated)).toBe(true)
      expect(device.currentKeyId).toBe(last)
      // A refused change does not stop the next one.
      await refused(mine.changePassphrase({ key: k1 }, { key: k2 }), 'session/wrong_passphrase')
      await mine.rotate()
      expect(mine.keyIds).toHaveLength(4)
    })

    it('refuses malformed keyrings and weak parameters', async () => {
      const good = ring.serialize()
      await refused(Keyring.open({ ...good, version: 2 }, { passphrase: PASS }), 'session/invalid_request')
      await refused(
        Keyring.open({ ...good, kdf: { ...good.kdf, iterations: 1000 } }, { passphrase: PASS }),
        'session/invalid_request',
      )
      await refused(
        Keyring.open({ ...good, kdf: { ...good.kdf, iterations: 1e12 } }, { passphrase: PASS }),
        'session/invalid_request',
      )
      await refused(
        Keyring.open({ ...good, kdf: { ...good.kdf, salt: 'AAAA' } }, { passphrase: PASS }),
        'session/invalid_request',
      )
      await refused(Keyring.open({ ...good, keys: [] }, { passphrase: PASS }), 'session/invalid_request')
      await refused(
        Keyring.open({ ...good, keys: [{ ...good.keys[0], id: 'a.b' }] }, { passphrase: PASS }),
        'session/invalid_request',
      )
      await refused(
        Keyring.open({ ...good, keys: [good.keys[0], good.keys[0]] }, { passphrase: PASS }),
        'session/invalid_request',
      )
      await refused(Keyring.open(null, { passphrase: PASS }), 'session/invalid_request')
      await refused(Keyring.open(good, { passphrase: '' }), 'session/invalid_request')
      await refused(Keyring.create({ passphrase: PASS }, { iterations: 100_000 }), 'session/invalid_request')
      // A wrapped key moved under another id does not unwrap.
      const [k] = good.keys
      await refused(
        Keyring.open({ ...good, keys: [{ ...k, seq: k.seq + 1 }] }, { passphrase: PASS }),
        'session/wrong_passphrase',
      )
    })
  })

  describe('integrity', () => {
    it('refuses an entry opened under another session, or its box in another entry', async () => {
      await refused(openEntry(ring, 's_other', sealedEntries[0]), 'session/integrity')
      const [user, assistant] = sealedEntries
      await refused(openEntry(ring, SESSION, { ...assistant, box: user.box }), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...user, id: 'e_other' }), 'session/integrity')
    })

    it('refuses a box whose clear fields were changed (role, parent, time, kind, attachments)', async () => {
      const [user, assistant] = sealedEntries as [SealedEntry & { role: string }, SealedEntry]
      await refused(openEntry(ring, SESSION, { ...user, role: 'assistant' }), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...assistant, parent_id: null }), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...user, timestamp: user.timestamp + 1 }), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...user, attachment_ids: ['a_1'] }), 'session/integrity')
      await refused(
        openEntry(ring, SESSION, { ...user, kind: 'custom', role: undefined }),
        'session/integrity',
      )
    })

    it('refuses an assistant message relabelled as a user one (the schemas would both accept it)', async () => {
      const assistant = sealedEntries[1]
      await refused(openEntry(ring, SESSION, { ...assistant, role: 'user' }), 'session/integrity')
    })

    it('refuses an older revision replayed under a newer one', async () => {
      const base = entries[0]
      if (base.kind !== 'message') throw new Error('sample')
      const v1 = await sealEntry(ring, SESSION, base)
      const next = {
        ...base,
        revision: 1,
        message: { ...base.message, content: [{ type: 'text' as const, text: 'edited' }] },
      }
      const v2 = await sealEntry(ring, SESSION, next)
      expect((await openEntry(ring, SESSION, v2)).revision).toBe(1)
      await refused(openEntry(ring, SESSION, { ...v2, box: v1.box }), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...v1, revision: 1 }), 'session/integrity')
    })

    it('refuses a meta field moved to another field, counter or session', async () => {
      const s = sealedMeta
      await refused(openMeta(ring, { ...s, description: s.title }, policy), 'session/integrity')
      await refused(
        openMeta(ring, { ...s, title: { ...s.title, rev: s.title.rev + 1 } }, policy),
        'session/integrity',
      )
      await refused(
        openMeta(ring, { ...s, session_id: 's_other', draft_attachments: undefined }, policy),
        'session/integrity',
      )
      await refused(openMeta(ring, { ...s, draft: s.status_reason }, policy), 'session/integrity')
    })

    it('raises a changed meta field counter and keeps unchanged boxes', async () => {
      const renamed = { ...meta, title: 'renamed' }
      const next = await sealMeta(ring, renamed, { policy, previous: sealedMeta, changed: ['title'] })
      expect(next.title.rev).toBe(sealedMeta.title.rev + 1)
      expect(next.description).toBe(sealedMeta.description)
      expect(next.metadata).toBe(sealedMeta.metadata)
      expect(await openMeta(ring, stored(next), policy)).toEqual(renamed)
      // The old title replayed under the new counter.
      await refused(
        openMeta(ring, { ...next, title: { ...sealedMeta.title, rev: next.title.rev } }, policy),
        'session/integrity',
      )
    })

    it('names the meta fields replayed whole from an older state', async () => {
      const renamed = await sealMeta(
        ring,
        { ...meta, title: 'renamed', metadata: { owner: 'alice' } },
        {
          policy,
          previous: sealedMeta,
          changed: ['title', 'metadata'],
        },
      )
      expect(olderMetaFields(renamed, renamed)).toEqual([])
      expect(olderMetaFields(sealedMeta, renamed)).toEqual([])
      // The server hands back the old title and metadata, each as it was: they open, and are older.
      expect(await openMeta(ring, sealedMeta, policy)).toEqual(meta)
      expect(olderMetaFields(renamed, sealedMeta)).toEqual(['title', 'metadata'])
      expect(olderMetaFields(renamed, { ...sealedMeta, title: renamed.title })).toEqual(['metadata'])
    })

    it('refuses a policy or metadata that uses the reserved key', async () => {
      await refused(
        sealMeta(ring, meta, { policy: { clearMetadataKeys: [SEALED_METADATA_KEY] } }),
        'session/invalid_request',
      )
      const reserved = { ...meta, metadata: { [SEALED_METADATA_KEY]: 'mine' } }
      await refused(sealMeta(ring, reserved, { policy }), 'session/invalid_request')
      await refused(
        openMeta(ring, sealedMeta, { clearMetadataKeys: [SEALED_METADATA_KEY] }),
        'session/invalid_request',
      )
    })

    it('refuses clear metadata keys the policy does not declare', async () => {
      const md = { ...sealedMeta.metadata!, injected: 'by the server' }
      await refused(openMeta(ring, { ...sealedMeta, metadata: md }, policy), 'session/integrity')
      await refused(openMeta(ring, sealedMeta), 'session/integrity')
    })

    it('refuses every flipped bit position of a sealed value: version, key id, IV, ciphertext and tag', async () => {
      const sealed = await sealEntry(ring, SESSION, entries[4])
      const bytes = decodeBase64(sealed.box)!
      for (let i = 0; i < bytes.length; i++) {
        const flipped = bytes.slice()
        flipped[i] ^= 1 << (i % 8)
        await refused(
          openEntry(ring, SESSION, { ...sealed, box: encodeBase64(flipped) }),
          'session/integrity',
        )
      }
      await refused(
        openEntry(ring, SESSION, { ...sealed, box: encodeBase64(bytes.subarray(0, 40)) }),
        'session/integrity',
      )
      await refused(openEntry(ring, SESSION, { ...sealed, box: 'not base64!' }), 'session/integrity')
    })

    it('refuses attachment bytes flipped, or opened as another attachment', async () => {
      const sealed = await sealAttachmentBytes(ring, SESSION, 'a_1', attachmentBytes)
      await refused(openAttachmentBytes(ring, SESSION, 'a_2', sealed), 'session/integrity')
      await refused(openAttachmentBytes(ring, 's_other', 'a_1', sealed), 'session/integrity')
      const flipped = sealed.slice()
      flipped[flipped.length - 20] ^= 0x40
      await refused(openAttachmentBytes(ring, SESSION, 'a_1', flipped), 'session/integrity')
      const m = await sealAttachmentMeta(ring, attachment)
      await refused(openAttachmentMeta(ring, { ...m, attachment_id: 'a_2' }), 'session/integrity')
      await refused(openAttachmentMeta(ring, { ...m, created_at: m.created_at + 1 }), 'session/integrity')
      // Bytes of another attachment, sealed for this id, do not match this metadata.
      const other = await sealAttachmentBytes(ring, SESSION, 'a_1', new TextEncoder().encode('other'))
      await refused(openAttachmentBytes(ring, SESSION, 'a_1', other, attachment), 'session/integrity')
    })

    it('refuses malformed stored records with session/integrity', async () => {
      await refused(openEntry(ring, SESSION, null), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...sealedEntries[0], box: undefined }), 'session/integrity')
      await refused(openEntry(ring, SESSION, { ...sealedEntries[0], revision: -1 }), 'session/integrity')
      await refused(openMeta(ring, { ...sealedMeta, title: 'clear title' }, policy), 'session/integrity')
      await refused(openAttachmentMeta(ring, { attachment_id: 'a_1' }), 'session/integrity')
    })
  })

  describe('the documented format', () => {
    // docs/encryption.md's layout, built here by hand with the keyring's own data key: what
    // another implementation would write. It opens; what no writer of the format produces does not.
    const handSealed = async (plain: Uint8Array<ArrayBuffer>, aad: unknown[]): Promise<string> => {
      const id = ring.currentKeyId
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const additionalData = new TextEncoder().encode(JSON.stringify(['colloquy', 1, id, ...aad]))
      const ct = new Uint8Array(
        await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData }, ring.keyFor(id)!, plain),
      )
      const out = new Uint8Array([1, id.length, ...new TextEncoder().encode(id), ...iv, ...ct])
      return encodeBase64(out)
    }
    /** `json` padded to its bucket, or to one byte past it. */
    const padded = (json: unknown, offBucket = false): Uint8Array<ArrayBuffer> => {
      const body = new TextEncoder().encode(JSON.stringify(json))
      const out = new Uint8Array(bucketOf(body.length + 1) + (offBucket ? 1 : 0))
      out.set(body)
      out[body.length] = 0x80
      return out
    }
    const custom = entries[4]
    const clear = {
      id: custom.id,
      parent_id: custom.parent_id,
      timestamp: custom.timestamp,
      revision: 0,
      kind: 'custom',
    }
    const aad = ['entry', SESSION, custom.id, 0, [custom.parent_id, 'custom', null, custom.timestamp, []]]
    const body =
      custom.kind === 'custom'
        ? { custom_type: custom.custom_type, data: custom.data, origin: custom.origin }
        : {}

    it('opens a value built by hand from the layout', async () => {
      const box = await handSealed(padded(body), aad)
      expect(await openEntry(ring, SESSION, { ...clear, box })).toEqual(custom)
    })

    it('refuses padding that is not a bucket long, even under the right key', async () => {
      const box = await handSealed(padded(body, true), aad)
      const e = await refused(openEntry(ring, SESSION, { ...clear, box }), 'session/integrity')
      expect(e.message).toMatch(/padded/)
    })

    it('refuses clear attachment ids that are not those of the content, even under the right key', async () => {
      const user = entries[0]
      if (user.kind !== 'message') throw new Error('sample')
      const { role, ...message } = user.message
      const ids = ['a_1']
      const userAad = ['entry', SESSION, user.id, 0, [null, 'message', role, user.timestamp, ids]]
      const box = await handSealed(padded({ message, origin: user.origin }), userAad)
      const record = {
        id: user.id,
        parent_id: null,
        timestamp: user.timestamp,
        revision: 0,
        kind: 'message',
        role,
        attachment_ids: ids,
        box,
      }
      const e = await refused(openEntry(ring, SESSION, record), 'session/integrity')
      expect(e.message).toMatch(/attachment_ids/)
    })
  })

  describe('what is stored', () => {
    it('holds no byte of the marker outside the declared clear key', async () => {
      const needle = new TextEncoder().encode(MARKER)
      const m = await sealAttachmentMeta(ring, attachment)
      const bytes = await sealAttachmentBytes(
        ring,
        SESSION,
        'a_1',
        new TextEncoder().encode(`${MARKER} in a file`),
      )
      const { owner, ...rest } = sealedMeta.metadata!
      expect(owner).toContain(MARKER) // the search below finds what is there
      const text = JSON.stringify([sealedEntries, { ...sealedMeta, metadata: rest }, m])
      expect(text).not.toContain(MARKER)
      expect(JSON.stringify(sealedMeta)).toContain(MARKER)
      expect(contains(bytes, needle)).toBe(false)
      expect(contains(new TextEncoder().encode(`x${MARKER}`), needle)).toBe(true)
      // Nor in any decoded box: the ciphertext is not the plaintext in another encoding.
      const boxes = [...text.matchAll(/"box":"([^"]+)"/g)].map((x) => decodeBase64(x[1])!)
      expect(boxes.length).toBeGreaterThan(10)
      for (const b of boxes) expect(contains(b, needle)).toBe(false)
    })

    it('pads: short values share one size, longer ones fall in buckets', async () => {
      const size = async (title: string): Promise<number> =>
        decodeBase64((await sealMeta(ring, { ...meta, title })).title.box)!.length
      const short = await size('')
      expect(await size('a title of forty characters, give or ta')).toBe(short)
      expect(short).toBe(2 + ring.currentKeyId.length + 12 + MIN_BUCKET + 16)
      expect(await size('x'.repeat(100))).toBe(await size('x'.repeat(101)))
    })
  })

  describe('sealing many at once', () => {
    it('seals values started together, short, long and multi-byte, each for its own place only', async () => {
      // Every seal reads its text and associated data when it starts; thousands in flight at
      // once (a burst of appends) must each hold their own, not the last one's.
      const many: SessionEntry[] = Array.from({ length: 300 }, (_, i) => ({
        id: `e_${String(i).padStart(4, '0')}`,
        parent_id: i ? `e_${String(i - 1).padStart(4, '0')}` : null,
        timestamp: i,
        revision: i % 3,
        kind: 'message',
        message: {
          role: 'user',
          content: [{ type: 'text', text: `${i} ${'é✓𝄞'.repeat(i * 7)}` }],
          timestamp: i,
        },
      }))
      const sealed = await Promise.all(many.map((e) => sealEntry(ring, SESSION, e)))
      const opened = await Promise.all(sealed.map((e) => openEntry(ring, SESSION, stored(e))))
      expect(opened).toEqual(many)
      // And each box opens only where it was sealed.
      await refused(
        openEntry(ring, SESSION, { ...stored(sealed[1]!), box: sealed[0]!.box }),
        'session/integrity',
      )
    })
  })

  describe('base64, strictly, in this runtime', () => {
    it('decodes canonical padded base64 and refuses every other form', () => {
      const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
      for (const n of [0, 1, 2, 3, 4, 255, 256])
        expect(decodeBase64(encodeBase64(bytes.subarray(0, n)))).toEqual(bytes.subarray(0, n))
      expect(encodeBase64(new TextEncoder().encode('ABC'))).toBe('QUJD')
      for (const bad of [
        'QQ', // no padding
        'QR==', // stray bits after the last byte
        'QUI=QUJD', // padding before the end
        'QUJD    ', // whitespace, where a decoder skipping it would find 3 bytes
        'QU JD   ',
        'QUJD\nQQ==',
        '-_-_', // the URL alphabet
        'QUJ\u00e9',
      ])
        expect(decodeBase64(bad), bad).toBeUndefined()
    })
  })
}
