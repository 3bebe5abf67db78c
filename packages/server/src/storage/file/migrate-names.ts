import { mkdir, readdir, readFile, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { LIMITS, isValidId } from '@colloquy/core/wire'
import { BOUNDED_NAME, boundedName, decodeId, legacyIdOfFile, sessionFileName } from './file-names.js'
import { parseFile } from './jsonl.js'
import { syncDir } from './journal.js'

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  )

/**
 * Moves an entry of `from` (default: the data directory `dir` itself) into `.colloquy/orphans/`
 * under `boundedName(its name)` (`.1`, `.2`… when taken): a name found on disk may be as long as
 * the file system allows, so a suffix could not be added to it. Returns where it went (the
 * warning that says so names the original).
 */
export async function moveAside(dir: string, name: string, from = dir): Promise<string> {
  const orphans = join(dir, '.colloquy', 'orphans')
  await mkdir(orphans, { recursive: true })
  const base = boundedName(name)
  let target = join(orphans, base)
  for (let n = 1; await exists(target); n++) target = join(orphans, `${base}.${n}`)
  await rename(join(from, name), target)
  return target
}

export const FOLDER_SUFFIX = '.d'
export const META_SUFFIX = '.json'

/**
 * Renames the attachment folders an earlier version wrote (`<percent-encoded session id>.d`,
 * holding `<percent-encoded attachment id>.json` metadata) to the current names
 * (`boundedName(id)` plus the same suffixes). The metadata files inside a folder go first, then
 * the folder: each step is one atomic rename and a name tells its layout, so a crash anywhere
 * leaves a directory the next open finishes, and a second run finds nothing to do. A folder
 * whose current name is taken already is moved aside with a warning. Returns the folders moved.
 */
export async function migrateAttachmentFolders(
  dir: string,
  root: string,
  fsync: boolean,
  warn: (message: string) => void,
): Promise<number> {
  let moved = 0
  const names = await readdir(root).catch(() => [] as string[])
  for (const name of names) {
    const base = name.endsWith(FOLDER_SUFFIX) ? name.slice(0, -FOLDER_SUFFIX.length) : undefined
    const id = base === undefined || BOUNDED_NAME.test(base) ? undefined : decodeId(base)
    if (id === undefined) continue
    const legacy = join(root, name)
    try {
      let inner = 0
      for (const file of await readdir(legacy)) {
        const aid = file.endsWith(META_SUFFIX) ? decodeId(file.slice(0, -META_SUFFIX.length)) : undefined
        if (aid === undefined || BOUNDED_NAME.test(file.slice(0, -META_SUFFIX.length))) continue
        await rename(join(legacy, file), join(legacy, boundedName(aid) + META_SUFFIX))
        inner++
      }
      if (inner && fsync) await syncDir(legacy)
      const target = boundedName(id) + FOLDER_SUFFIX
      if (await exists(join(root, target)))
        warn(
          `attachments/${name}: ${target} exists already; moved aside to ${await moveAside(dir, name, root)}`,
        )
      else await rename(legacy, join(root, target))
      moved++
    } catch (e) {
      warn(
        `attachments/${name.slice(0, 80)}: could not be migrated (${String(e)}); tried again on the next open`,
      )
    }
  }
  if (moved && fsync) await syncDir(root)
  return moved
}

/**
 * Renames the session files an earlier version wrote (percent-encoded ids) to the current names.
 * Each rename is atomic and a name tells its layout, so a crash halfway leaves a directory the
 * next open finishes. A file whose meta records name another session than its file name (two ids
 * an earlier version folded into one file, e.g. `q\ud800` and `q\ufffd`), whose id is no longer
 * valid (a lone surrogate, longer than the id limit), or whose current name is already taken,
 * is moved aside to `.colloquy/orphans/` with a warning rather than given to either session.
 */
export async function migrateLegacyNames(
  dir: string,
  fsync: boolean,
  warn: (message: string) => void,
): Promise<number> {
  let moved = 0
  for (const name of await readdir(dir)) {
    const id = legacyIdOfFile(name)
    if (id === undefined) continue
    let ids: Set<unknown>
    try {
      ids = (await parseFile(await readFile(join(dir, name)))).sessionIds
    } catch (e) {
      warn(
        `${name}: cannot be read to migrate it (${String(e)}); left in place, tried again on the next open`,
      )
      continue
    }
    const foreign = [...ids].filter((x) => x !== id)
    const target = sessionFileName(id)
    let why: string | undefined
    if (foreign.length) why = `it holds records of ${foreign.length + (ids.has(id) ? 1 : 0)} sessions`
    else if (!isValidId(id)) why = `its id is longer than ${LIMITS.idBytes} UTF-8 bytes`
    else if (await exists(join(dir, target))) why = `${target} exists already`
    try {
      if (why) warn(`${name}: ${why}; moved aside to ${await moveAside(dir, name)}`)
      else await rename(join(dir, name), join(dir, target))
      moved++
    } catch (e) {
      warn(`${name}: could not be migrated (${String(e)}); tried again on the next open`)
    }
  }
  if (moved && fsync) await syncDir(dir)
  return moved
}
