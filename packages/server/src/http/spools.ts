import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Upload spools: one folder per upload in the system's temporary directory, named after the
 * process that made it (`colloquy-upload-<pid>-…`), so that a server starting later can tell
 * which ones a dead process left behind (a crash skips the `rm` after each upload).
 */
/** A fresh spool folder of this process. */
export const makeSpool = (): Promise<string> => mkdtemp(join(tmpdir(), `colloquy-upload-${process.pid}-`))

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists, run by someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Removes the spool folders of processes that are gone (another server on the machine keeps
 * its own, live ones). Returns how many were removed; a folder that cannot be removed is left.
 */
export async function removeDeadSpools(log: (message: string) => void): Promise<number> {
  const names = await readdir(tmpdir()).catch(() => [] as string[])
  let removed = 0
  for (const name of names) {
    const m = /^colloquy-upload-(\d+)-/.exec(name)
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue
    try {
      await rm(join(tmpdir(), name), { recursive: true, force: true })
      removed++
    } catch (e) {
      log(`could not remove the upload spool ${name} a stopped server left: ${String(e)}`)
    }
  }
  if (removed) log(`removed ${removed} upload spool folder(s) a stopped server left`)
  return removed
}
