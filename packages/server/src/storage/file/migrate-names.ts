import { mkdir, readdir, readFile, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { LIMITS, isValidId } from '@colloquy/core'
import { legacyIdOfFile, sessionFileName } from './file-names.js'
import { parseFile } from './jsonl.js'
import { syncDir } from './journal.js'

const exists = (path: string): Promise<boolean> => stat(path).then(() => true, () => false)

/** Moves a file into `.colloquy/orphans/` under a name not taken there yet; returns where it went. */
export async function moveAside(dir: string, name: string): Promise<string> {
  const orphans = join(dir, '.colloquy', 'orphans')
  await mkdir(orphans, { recursive: true })
  let target = join(orphans, name)
  for (let n = 1; await exists(target); n++) target = join(orphans, `${name}.${n}`)
  await rename(join(dir, name), target)
  return target
}

/**
 * Renames the session files an earlier version wrote (percent-encoded ids) to the current names.
 * Each rename is atomic and a name tells its layout, so a crash halfway leaves a directory the
 * next open finishes. A file whose meta records name another session than its file name (two ids
 * an earlier version folded into one file, e.g. `q\ud800` and `q\ufffd`), whose id is no longer
 * valid (a lone surrogate, longer than the id limit), or whose current name is already taken,
 * is moved aside to `.colloquy/orphans/` with a warning rather than given to either session.
 */
export async function migrateLegacyNames(dir: string, fsync: boolean, warn: (message: string) => void): Promise<number> {
  let moved = 0
  for (const name of await readdir(dir)) {
    const id = legacyIdOfFile(name)
    if (id === undefined) continue
    let ids: Set<unknown>
    try {
      ids = parseFile(await readFile(join(dir, name))).sessionIds
    } catch (e) {
      warn(`${name}: cannot be read to migrate it (${String(e)}); left in place, tried again on the next open`)
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
