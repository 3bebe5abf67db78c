import type { BrowserContext, Page } from 'playwright'

// An error thrown in a page (an uncaught exception, an unhandled rejection) fails the test that
// drove it, even when the screen still shows what the test expected.

/**
 * Records the page errors of every page `context` has or opens; the returned check throws with
 * them (and forgets them). Call it in an `afterEach` before the context closes.
 */
export function watchPageErrors(context: BrowserContext): () => void {
  const errors: string[] = []
  const watch = (page: Page): void =>
    void page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.stack ?? e.message}`))
  for (const page of context.pages()) watch(page)
  context.on('page', watch)
  return () => {
    if (errors.length) throw new Error(`${errors.length} page error(s):\n${errors.splice(0).join('\n')}`)
  }
}
