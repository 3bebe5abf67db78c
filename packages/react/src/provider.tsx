import type { Store } from '@colloquy/core'
import { createContext, useContext, useMemo, type ReactNode } from 'react'
import type { SyncLike } from '@colloquy/kit'

interface Colloquy {
  readonly store: Store | null
  readonly sync: SyncLike | null
}

const ColloquyContext = createContext<Colloquy | undefined>(undefined)

export interface ColloquyProviderProps {
  /** The store; `null` while it opens, and on the server: every hook then reports loading. */
  store: Store | null | undefined
  /** A sync client (anything with `status$`), for `useSyncStatus`. */
  sync?: SyncLike | null
  children?: ReactNode
}

export function ColloquyProvider({ store, sync, children }: ColloquyProviderProps): ReactNode {
  const value = useMemo(() => ({ store: store ?? null, sync: sync ?? null }), [store, sync])
  return <ColloquyContext.Provider value={value}>{children}</ColloquyContext.Provider>
}

export function useColloquy(): Colloquy {
  const value = useContext(ColloquyContext)
  if (!value) throw new Error('@colloquy/react: no <ColloquyProvider> above this component')
  return value
}

/** The provider's store, or `null` while there is none (opening, or server rendering). */
export function useStore(): Store | null {
  return useColloquy().store
}
