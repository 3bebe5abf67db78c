import { createWriteStream, openAsBlob } from 'node:fs'
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { AttachmentMeta, SessionHead, Storage, StorageReader, WriteSet } from '@colloquy/core'
import { decodeId, encodeId } from './file-names.js'

const ENOENT = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT'
const SHA = /^[0-9a-f]{64}$/
/** Folder suffix: an encoded id may be `.` or `..`, a suffixed name never walks out of `attachments/`. */
const FOLDER_SUFFIX = '.d'
const META_SUFFIX = '.json'

/**
 * Attachments as files beside a storage's sessions, the layout of the contract's fs adapter
 * made content-addressed: `attachments/<enc session>.d/<enc attachment id>.json` holds the
 * AttachmentMeta, `attachments/<enc session>.d/<sha256>.bin` the bytes, shared by every
 * attachment of that session with the same content. A session's folder is its tenancy scope and
 * goes with it.
 *
 * Write order keeps references safe: bytes, then metadata, both atomic (tmp + rename), before
 * the commit that makes them visible; removals (metadata first, then bytes nothing else names)
 * only after the commit stands. A commit that fails takes its new metadata back out.
 */
export function withAttachmentFiles<S extends Storage>(dir: string, inner: S, options: { fsync?: boolean } = {}): S {
  const root = join(dir, 'attachments')
  const fsync = options.fsync ?? true
  const folder = (sid: string): string => join(root, encodeId(sid) + FOLDER_SUFFIX)
  const metaPath = (sid: string, aid: string): string => join(folder(sid), encodeId(aid) + META_SUFFIX)
  const bytesPath = (sid: string, sha: string): string => {
    if (!SHA.test(sha)) throw new Error(`not a sha256: ${sha}`)
    return join(folder(sid), `${sha}.bin`)
  }
  /** Attachment lists as last committed, by session. */
  const known = new Map<string, readonly AttachmentMeta[]>()
  let tmpCounter = 0

  const atomicWrite = async (path: string, write: (tmp: string) => Promise<void>): Promise<void> => {
    const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`
    try {
      await write(tmp)
      if (fsync) {
        const fh = await open(tmp, 'r+')
        await fh.datasync().finally(() => fh.close())
      }
      await rename(tmp, path)
    } catch (e) {
      await unlink(tmp).catch(() => {})
      throw e
    }
  }
  const exists = (path: string): Promise<boolean> => open(path, 'r').then((fh) => (fh.close(), true), () => false)

  const withList = (head: SessionHead | undefined): SessionHead | undefined => {
    if (!head || head.attachments) return head
    const list = known.get(head.meta.session_id)
    return list?.length ? { ...head, attachments: list } : head
  }

  const readFolder = async (sid: string): Promise<AttachmentMeta[]> => {
    const names = await readdir(folder(sid)).catch((e: unknown) => (ENOENT(e) ? [] : Promise.reject(e)))
    const out: AttachmentMeta[] = []
    for (const name of names) {
      if (!name.endsWith(META_SUFFIX) || decodeId(name.slice(0, -META_SUFFIX.length)) === undefined) continue
      const meta = JSON.parse(await readFile(join(folder(sid), name), 'utf8')) as AttachmentMeta
      out.push(Object.freeze({ ...meta, session_id: sid }))
    }
    return out.sort((a, b) => a.created_at - b.created_at || (a.attachment_id < b.attachment_id ? -1 : a.attachment_id > b.attachment_id ? 1 : 0))
  }

  /** Bytes and metadata a commit introduces, written before it; returns what to undo if it fails. */
  const before = async (ws: WriteSet): Promise<string[]> => {
    const written: string[] = []
    for (const [sid, head] of ws.heads) {
      const list = head.attachments ?? []
      const prev = ws.deleted.has(sid) ? [] : (known.get(sid) ?? [])
      if (list === prev) continue
      const had = new Set(prev.map((a) => a.attachment_id))
      const added = list.filter((a) => !had.has(a.attachment_id))
      if (!added.length) continue
      await mkdir(folder(sid), { recursive: true })
      for (const a of added) {
        const target = bytesPath(sid, a.sha256)
        if (!(await exists(target))) {
          const put = ws.blobs?.find((b) => b.op === 'put' && b.session_id === sid && b.attachment_id === a.attachment_id)
          const copy = ws.blobs?.find((b) => b.op === 'copy' && b.session_id === sid && b.attachment_id === a.attachment_id)
          if (put?.op === 'put') {
            await atomicWrite(target, (tmp) => pipeline(Readable.fromWeb(put.bytes.stream() as import('node:stream/web').ReadableStream), createWriteStream(tmp)))
          } else if (copy?.op === 'copy') {
            const source = bytesPath(copy.from_session_id, a.sha256)
            // A hard link shares the bytes between a session and its fork; a copy where links fail.
            await atomicWrite(target, (tmp) => link(source, tmp).catch(() => copyFile(source, tmp)))
          } else throw new Error(`attachment ${a.attachment_id} of ${sid} has no bytes to write`)
        }
        const path = metaPath(sid, a.attachment_id)
        await atomicWrite(path, async (tmp) => {
          const fh = await open(tmp, 'w')
          await fh.writeFile(JSON.stringify(a)).finally(() => fh.close())
        })
        written.push(path)
      }
    }
    return written
  }

  /** After the commit stands: removed metadata, bytes nothing names any more, deleted sessions' folders. */
  const after = async (ws: WriteSet): Promise<void> => {
    for (const sid of ws.deleted) {
      if (!ws.heads.has(sid)) {
        known.delete(sid)
        await rm(folder(sid), { recursive: true, force: true })
      }
    }
    for (const [sid, head] of ws.heads) {
      const list = head.attachments ?? []
      const prev = ws.deleted.has(sid) ? [] : (known.get(sid) ?? [])
      if (list === prev) continue
      const keep = new Set(list.map((a) => a.attachment_id))
      const gone = prev.filter((a) => !keep.has(a.attachment_id))
      for (const a of gone) await unlink(metaPath(sid, a.attachment_id)).catch((e: unknown) => (ENOENT(e) ? undefined : Promise.reject(e)))
      const shas = new Set(list.map((a) => a.sha256))
      for (const a of gone) if (!shas.has(a.sha256)) await unlink(bytesPath(sid, a.sha256)).catch((e: unknown) => (ENOENT(e) ? undefined : Promise.reject(e)))
      if (list.length) known.set(sid, list)
      else known.delete(sid)
    }
  }

  const storage: S = {
    ...inner,
    async open() {
      const heads = await inner.open()
      known.clear()
      const live = new Set(heads.map((h) => h.meta.session_id))
      for (const head of heads) {
        const list = await readFolder(head.meta.session_id)
        if (list.length) known.set(head.meta.session_id, list)
      }
      // Folders of sessions that are gone (a crash between a delete and its cleanup).
      for (const name of await readdir(root).catch(() => [] as string[])) {
        const sid = name.endsWith(FOLDER_SUFFIX) ? decodeId(name.slice(0, -FOLDER_SUFFIX.length)) : undefined
        if (sid !== undefined && !live.has(sid)) await rm(join(root, name), { recursive: true, force: true })
      }
      return heads.map((h) => withList(h)!)
    },
    transact(work) {
      let ws: WriteSet | undefined
      let written: string[] = []
      return inner
        .transact(async (reader) => {
          const wrapped: StorageReader = { head: async (id) => withList(await reader.head(id)), entries: (id) => reader.entries(id) }
          ws = await work(wrapped)
          written = await before(ws)
          return ws
        })
        .then(
          () => (ws ? after(ws) : undefined),
          async (e: unknown) => {
            for (const path of written) await unlink(path).catch(() => {})
            throw e
          },
        )
    },
    async attachmentBytes(session_id, attachment_id) {
      const meta = (known.get(session_id) ?? []).find((a) => a.attachment_id === attachment_id)
      if (!meta) return undefined
      try {
        // A Blob backed by the file: nothing is read until the caller reads it.
        return await openAsBlob(bytesPath(session_id, meta.sha256), { type: meta.mime })
      } catch (e) {
        if (ENOENT(e)) return undefined
        throw e
      }
    },
  }
  return storage
}
