import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root, found from this file wherever a bundler put it (benchmarks bundle it). */
function repoRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir
    if (dirname(dir) === dir) throw new Error('repository root not found')
  }
}

/** The built CLI: the root test command builds every package before vitest runs. */
export const CLI = join(repoRoot(), 'packages/server/dist/cli.js')
/**
 * The same command line with test hooks (`--test-clock`, `--test-crash-*`, ...), which the
 * installed CLI does not have: the server's public API with faults and test routes injected.
 */
export const TEST_SERVER = join(repoRoot(), 'test/support/test-server.mjs')

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  /** Everything the process wrote, for failure messages. */
  output(): string
  /** SIGTERM (graceful) or SIGKILL (crash); resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>
  /** Resolves when the process exits on its own (e.g. fault injection), with its signal. */
  exited: Promise<NodeJS.Signals | number | null>
}

/**
 * Starts `colloquy-server` on a free loopback port and waits for its "listening on" line: the
 * installed CLI, or the test launcher when `args` name a test hook (`--test-…`).
 */
export async function startServer(args: readonly string[], timeoutMs = 15_000): Promise<ServerProcess> {
  if (!existsSync(CLI))
    throw new Error(
      `${CLI} is missing: run \`pnpm --filter @colloquy/core build && pnpm --filter @colloquy/server build\``,
    )
  const script = args.some((a) => a.startsWith('--test-')) ? TEST_SERVER : CLI
  const child = spawn(process.execPath, [script, '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  )
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start in ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    )
    const check = (): void => {
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    }
    child.stdout!.on('data', check)
    void exited.then((how) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${String(how)}) before listening:\n${out}`))
    })
  })
  return {
    url,
    child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
  }
}
