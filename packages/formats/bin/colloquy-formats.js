#!/usr/bin/env node
// The installed command is this file, not dist/cli.js: package managers link a workspace's bins
// at install time, before it is built, and skip (with a warning) a target that does not exist yet.
try {
  await import('../dist/cli.js')
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('/dist/cli.js')) {
    console.error(
      'colloquy-formats: the package is not built; run `npx -y pnpm@10.34.9 run build` at the repository root first',
    )
    process.exit(1)
  }
  throw error
}
