import type { Store } from '@colloquy/core'
import type { ReactNode } from 'react'
import { ColloquyProvider } from '../src/index.js'
import type { SyncLike } from '../src/index.js'

/** A `wrapper` for Testing Library's render / renderHook. */
export const providerOf =
  (store: Store | null, sync?: SyncLike) =>
  ({ children }: { children?: ReactNode }): ReactNode => (
    <ColloquyProvider store={store} sync={sync}>
      {children}
    </ColloquyProvider>
  )
