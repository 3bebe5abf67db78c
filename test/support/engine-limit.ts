import type { TestContext } from 'vitest'

// What a test saw of its engine for the support table (`test/engines/support.ts`): a limit the
// engine has (a missing API, a refused Blob) or the browser's version. Set by the test that
// observed it, so the table says only what a run showed.

declare module 'vitest' {
  interface TaskMeta {
    /** A limit of this engine this test observed (and checked the fallback for). */
    limit?: string
    /** The browser and version this test ran in. */
    version?: string
  }
}

/** Records `text` as a limit of the engine this test runs in. */
export function noteLimit(ctx: Pick<TestContext, 'task'>, text: string): void {
  ctx.task.meta.limit = text
}
