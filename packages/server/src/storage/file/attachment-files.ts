import { createWriteStream, openAsBlob } from 'node:fs'
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { AttachmentMeta, SessionHead, Storage, StorageReader, WriteSet } from '@colloquy/core'
import { parseStoredAttachmentMeta } from '@colloquy/core/wire'
import { BOUNDED_NAME, boundedName } from './file-names.js'
import { FOLDER_SUFFIX, META_SUFFIX, migrateAttachmentFolders, moveAside } from './migrate-names.js'

const ENOENT = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT'
const SHA = /^[0-9a-f]{64}$/
/** What an interrupted atomic write leaves: `<name>.tmp-<pid>-<n>`, removed on open. */
const TMP = /\.tmp-\d+-\d+$/

/** A session's attachment folder name; a suffixed name never walks out of `attachments/`. */
export const attachmentFolderName = (session_id: string): string => boundedName(session_id) + FOLDER_SUFFIX
/** An attachment's metadata file name in its session's folder. */
export const attachmentMetaName = (attachment_id: string): string => boundedName(attachment_id) + META_SUFFIX

/** Moves what stands where a folder goes but is none (a file) aside, so the folder can be made again; says so. */
async function setAsideIfFile(dir: string, from: string, name: string, e: unknown): Promise<string> {
  if ((e as NodeJS.ErrnoException).code !== 'ENOTDIR') return ''
  try {
    return `; moved aside to ${await moveAside(dir, name, from)}`
  } catch (err) {
    return `; could not be moved aside (${String(err)})`
  }
}

/**
 * A session's attachments as its folder holds them; whatever cannot be read is skipped with a
 * warning. What opening reads for a session whose head it takes from its file.
 */
export async function readAttachmentFolder(
  dir: string,
  sid: string,
  warn: (message: string) => void,
): Promise<AttachmentMeta[]> {
  const root = join(dir, 'attachments')
  const folder = (sid: string): string => join(root, attachmentFolderName(sid))
  const setAside = (from: string, name: string, e: unknown): Promise<string> =>
    setAsideIfFile(dir, from, name, e)
  const where = `attachments/${attachmentFolderName(sid)}`
  let names: string[]
  try {
    names = await readdir(folder(sid))
  } catch (e) {
    if (!ENOENT(e))
      warn(
        `${where}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}); the session is served without its attachments${await setAside(root, attachmentFolderName(sid), e)}`,
      )
    return []
  }
  const out: AttachmentMeta[] = []
  for (const name of names) {
    if (TMP.test(name)) {
      // Left by a write a crash interrupted: never renamed into place, so nothing names it.
      await rm(join(folder(sid), name), { force: true, recursive: true }).catch(() => {})
      continue
    }
    if (!name.endsWith(META_SUFFIX)) continue
    try {
      const meta = parseStoredAttachmentMeta(
        JSON.parse(await readFile(join(folder(sid), name), 'utf8')),
        'attachment',
      )
      if (attachmentMetaName(meta.attachment_id) !== name)
        throw new Error('its attachment id is not the one its name stands for')
      if (!SHA.test(meta.sha256)) throw new Error('its sha256 is not 64 lowercase hex digits')
      out.push(Object.freeze({ ...meta, session_id: sid }))
    } catch (e) {
      warn(
        `${where}/${name}: skipped, not an attachment's metadata (${e instanceof Error ? e.message.slice(0, 200) : String(e)})`,
      )
    }
  }
  return out.sort(
    (a, b) =>
      a.created_at - b.created_at ||
      (a.attachment_id < b.attachment_id ? -1 : a.attachment_id > b.attachment_id ? 1 : 0),
  )
}

/**
 * Attachments as files beside a storage's sessions, the layout of the contract's fs adapter
 * made content-addressed and bounded: `attachments/<boundedName(session)>.d/<boundedName(attachment
 * id)>.json` holds the AttachmentMeta, `attachments/<boundedName(session)>.d/<sha256>.bin` the
 * bytes, shared by every attachment of that session with the same content. Every name is at most
 * 100 bytes whatever the ids (no ENAMETOOLONG, no two ids on one name; see file-names.ts), and
 * folders of the percent-encoded layout earlier versions wrote are migrated on open. A session's
 * folder is its tenancy scope and goes with it.
 *
 * Write order keeps references safe: bytes, then metadata, both atomic (tmp + rename), before
 * the commit that makes them visible; removals (metadata first, then bytes nothing else names)
 * only after the commit stands. A commit that fails takes its new metadata back out.
 *
 * Opening never fails over one bad entry: a folder that cannot be read, a metadata file that is
 * not an AttachmentMeta of its name, an entry of no known name are skipped with a warning, and
 * the rest is served.
 */
export function withAttachmentFiles<S extends Storage>(
  dir: string,
  inner: S,
  options: {
    fsync?: boolean
    warn?: (message: string) => void
    /**
     * Every session's head once `inner` opened, for a storage whose `open` returns none (heads
     * on demand); each carries its attachments, read from their folders when it was indexed.
     */
    heads?: () => Iterable<SessionHead>
  } = {},
): S {
  const root = join(dir, 'attachments')
  const fsync = options.fsync ?? true
  const warn = options.warn ?? ((m: string) => console.warn(`[colloquy fileStorage] ${m}`))
  const folder = (sid: string): string => join(root, attachmentFolderName(sid))
  const metaPath = (sid: string, aid: string): string => join(folder(sid), attachmentMetaName(aid))
  const bytesPath = (sid: string, sha: string): string => {
    if (!SHA.test(sha)) throw new Error('not a sha256')
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

  const withList = (head: SessionHead | undefined): SessionHead | undefined => {
    if (!head || head.attachments) return head
    const list = known.get(head.meta.session_id)
    return list?.length ? { ...head, attachments: list } : head
  }

  const readFolder = (sid: string): Promise<AttachmentMeta[]> => readAttachmentFolder(dir, sid, warn)
  const setAside = (from: string, name: string, e: unknown): Promise<string> =>
    setAsideIfFile(dir, from, name, e)

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
        // Bytes already there are shared; anything else in their place (a directory, a file cut
        // short) is replaced by these.
        const found = await stat(target).catch(() => undefined)
        if (!found?.isFile() || found.size !== a.size) {
          if (found) await rm(target, { recursive: true, force: true })
          const put = ws.blobs?.find(
            (b) => b.op === 'put' && b.session_id === sid && b.attachment_id === a.attachment_id,
          )
          const copy = ws.blobs?.find(
            (b) => b.op === 'copy' && b.session_id === sid && b.attachment_id === a.attachment_id,
          )
          if (put?.op === 'put') {
            await atomicWrite(target, (tmp) =>
              pipeline(
                Readable.fromWeb(put.bytes.stream() as import('node:stream/web').ReadableStream),
                createWriteStream(tmp),
              ),
            )
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
      for (const a of gone)
        await unlink(metaPath(sid, a.attachment_id)).catch((e: unknown) =>
          ENOENT(e) ? undefined : Promise.reject(e),
        )
      const shas = new Set(list.map((a) => a.sha256))
      for (const a of gone)
        if (!shas.has(a.sha256))
          await unlink(bytesPath(sid, a.sha256)).catch((e: unknown) =>
            ENOENT(e) ? undefined : Promise.reject(e),
          )
      if (list.length) known.set(sid, list)
      else known.delete(sid)
    }
  }

  const storage: S = {
    ...inner,
    async open() {
      // Folders of an earlier layout are renamed first: opening `inner` may read them.
      await migrateAttachmentFolders(dir, root, fsync, warn)
      const heads = await inner.open()
      known.clear()
      let names: string[] = []
      try {
        names = await readdir(root)
      } catch (e) {
        if (!ENOENT(e))
          warn(
            `attachments: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}); sessions are served without their attachments${await setAside(dir, 'attachments', e)}`,
          )
      }
      const live = new Set<string>()
      if (options.heads) {
        // The index holds each session's attachments: no folder is read, only those of
        // sessions with attachments are named (a folder a session left empty goes).
        for (const head of options.heads()) {
          if (!head.attachments?.length) continue
          known.set(head.meta.session_id, head.attachments)
          live.add(attachmentFolderName(head.meta.session_id))
        }
      } else {
        for (const head of heads) live.add(attachmentFolderName(head.meta.session_id))
        const present = new Set(names)
        for (const head of heads) {
          if (!present.has(attachmentFolderName(head.meta.session_id))) continue
          const list = await readFolder(head.meta.session_id)
          if (list.length) known.set(head.meta.session_id, list)
        }
      }
      // Folders of sessions that are gone (a crash between a delete and its cleanup) go; an
      // entry of no name this storage writes is left alone, with a warning.
      for (const name of names) {
        if (live.has(name)) continue
        if (name.endsWith(FOLDER_SUFFIX) && BOUNDED_NAME.test(name.slice(0, -FOLDER_SUFFIX.length))) {
          await rm(join(root, name), { recursive: true, force: true }).catch((e: unknown) =>
            warn(`attachments/${name}: the folder of a deleted session could not be removed (${String(e)})`),
          )
        } else warn(`attachments/${name.slice(0, 80)}: not a name this storage writes; left alone`)
      }
      return heads.map((h) => withList(h)!)
    },
    transact(work) {
      let ws: WriteSet | undefined
      let written: string[] = []
      return inner
        .transact(async (reader) => {
          const wrapped: StorageReader = {
            head: async (id) => withList(await reader.head(id)),
            entries: (id) => reader.entries(id),
          }
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
      const path = bytesPath(session_id, meta.sha256)
      try {
        // Something else in the file's place (a directory, a file cut short) is no bytes of this
        // attachment: answered as missing, never streamed as a broken or short download.
        const found = await stat(path)
        if (!found.isFile() || found.size !== meta.size) {
          warn(
            `attachments/${attachmentFolderName(session_id)}/${meta.sha256}.bin: ${found.isFile() ? `${found.size} bytes, ${meta.size} expected` : 'not a file'}; the attachment is answered as missing`,
          )
          return undefined
        }
        // A Blob backed by the file: nothing is read until the caller reads it.
        return await openAsBlob(path, { type: meta.mime })
      } catch (e) {
        if (ENOENT(e)) return undefined
        // A file where the session's folder goes (the index still lists its attachments).
        if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') {
          warn(
            `attachments/${attachmentFolderName(session_id)}: not a folder; the attachment is answered as missing`,
          )
          return undefined
        }
        throw e
      }
    },
  }
  return storage
}
