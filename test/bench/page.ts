import { dropDatabases } from './subjects/databases.js'
import type { BenchContext, BenchRow, Workload } from './types.js'

/**
 * The benchmark page's side of the runner. `run.mjs` builds page.html with every browser
 * workload file as a lazily imported chunk, then, for each workload, loads a fresh page and calls
 * `window.bench.run(file, id)`. A file that throws on import only fails its own workloads.
 * `workloadsOf` and `context` are also what the runner uses for Node workloads.
 */

export type WorkloadModule = { default?: unknown }
export type Loader = () => Promise<WorkloadModule>

export interface WorkloadInfo {
  id: string
  title: string
  env: Workload['env']
}

declare global {
  interface Window {
    bench?: {
      list(file: string): Promise<WorkloadInfo[]>
      run(file: string, id: string, runId: string, env?: Record<string, string>): Promise<BenchRow[]>
      /** Calls the export `fn` of a workload file with `args` (a fresh page's measurement). */
      call(file: string, fn: string, args: unknown[]): Promise<unknown>
      cleanup(): Promise<void>
    }
    /**
     * Given by the runner in Chromium: calls the export `fn` of the running workload's file in
     * a newly loaded page of its own and resolves with its result (`subjects/realm.ts`).
     */
    benchFreshPage?: (fn: string, args: unknown[]) => Promise<unknown>
  }
}

/** A module's workloads: its default export, a Workload or an array of them. */
export function workloadsOf(mod: WorkloadModule, file: string): Workload[] {
  const d = mod.default
  const list = Array.isArray(d) ? d : [d]
  for (const w of list) {
    const ok =
      typeof w === 'object' &&
      w !== null &&
      typeof (w as Workload).id === 'string' &&
      typeof (w as Workload).run === 'function'
    if (!ok) throw new Error(`${file}: the default export is not a Workload or an array of Workloads`)
  }
  return list as Workload[]
}

export const infoOf = (w: Workload): WorkloadInfo => ({ id: w.id, title: w.title, env: w.env })

/** Database names unique per run, so reruns and subjects never see each other's data. */
export function context(
  runId: string,
  log: (message: string) => void,
  env: Record<string, string | undefined> = {},
): BenchContext {
  let n = 0
  return {
    env: (name) => env[name],
    dbName: (label) => `bench-${runId}-${label.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${n++}`,
    log,
  }
}

export function start(files: Record<string, Loader>): void {
  const load = async (file: string): Promise<Workload[]> => {
    const loader = files[file]
    if (!loader) throw new Error(`${file} is not in the page bundle`)
    return workloadsOf(await loader(), file)
  }
  window.bench = {
    list: async (file) => (await load(file)).map(infoOf),
    async run(file, id, runId, env) {
      const w = (await load(file)).find((x) => x.id === id)
      if (!w) throw new Error(`${file} has no workload ${id}`)
      return w.run(context(runId, (m) => console.log(`[bench] ${m}`), env))
    },
    async call(file, fn, args) {
      const loader = files[file]
      if (!loader) throw new Error(`${file} is not in the page bundle`)
      const f = ((await loader()) as Record<string, unknown>)[fn]
      if (typeof f !== 'function') throw new Error(`${file} has no export ${fn}`)
      return (f as (...a: unknown[]) => Promise<unknown>)(...args)
    },
    cleanup: dropDatabases,
  }
}
