import { createServer, type ViteDevServer } from 'vite'

// What the multi-page tests share: a Vite dev server for a test page (packages resolved from
// source). The browsers that open it are in `engines.ts`.

/** Serves the page in `root` on a free loopback port; `url` is its address. */
export async function servePage(root: string): Promise<{ url: string; vite: ViteDevServer }> {
  const vite = await createServer({
    configFile: false,
    root,
    logLevel: 'error',
    resolve: { conditions: ['source', 'module', 'browser', 'development|production'] },
    server: { host: '127.0.0.1', port: 0, strictPort: false },
  })
  await vite.listen()
  return { url: vite.resolvedUrls!.local[0]!, vite }
}
