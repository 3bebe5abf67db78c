// Node-only helpers (`@colloquy/formats/node`): reading files and directories from disk
// without loading them whole. Kept apart so the main entry stays browser-safe.
import { openAsBlob } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join, relative, sep } from 'node:path'
import type { FileMap, TranscriptInput } from './input/source.js'
import type { SqliteOptions } from './types.js'

export interface ReadDirectoryOptions {
  /** Keep only files this accepts (paths relative to the directory, `/`-separated). */
  filter?: (path: string) => boolean
}

/**
 * A directory as a file map (an OpenCode `storage/` tree, a Claude Code project folder). Each
 * file is a disk-backed Blob: nothing is read until an importer asks for it.
 */
export async function readDirectory(dir: string, options: ReadDirectoryOptions = {}): Promise<FileMap> {
  const out: Record<string, Blob> = {}
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const full = join(d, e.name)
      if (e.isDirectory()) await walk(full)
      else if (e.isFile()) {
        const rel = relative(dir, full).split(sep).join('/')
        if (!options.filter || options.filter(rel)) out[rel] = await openAsBlob(full)
      }
    }
  }
  await walk(dir)
  return out
}

/** A path as importer input: a file becomes a disk-backed Blob, a directory a file map. */
export async function readPath(path: string): Promise<TranscriptInput> {
  return (await stat(path)).isDirectory() ? readDirectory(path) : openAsBlob(path)
}

/** sql.js's WebAssembly binary from the installed package, for OpenCode databases in Node. */
export async function nodeSqlite(): Promise<SqliteOptions & { wasmBinary: ArrayBuffer }> {
  const require = createRequire(import.meta.url)
  const wasm = await readFile(require.resolve('sql.js/dist/sql-wasm.wasm'))
  return { wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer }
}
