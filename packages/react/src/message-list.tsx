import { Fragment, isValidElement, memo, useEffect, useMemo, useRef, type ReactNode } from 'react'
import { groupIds } from './kit/row-groups.js'

export interface MessageListProps {
  /** The rows' ids in order: what `useMessageIds` returns, or any list of distinct ids. */
  ids: readonly string[]
  /**
   * Renders one row (a component that reads `useEntry`). Rows are keyed by their id. A new
   * function re-renders every row, as a new `map` callback would: pass a stable one (module
   * scope or `useCallback`) so that an append renders the new row only.
   */
  children: (id: string) => ReactNode
}

/**
 * A flat list of rows, as `ids.map(children)` renders it (no element of its own: the rows are
 * the children of whatever holds the list), but cheap to update in place at any length. React
 * walks every sibling of a row that re-renders; here rows are grouped (see `groupIds`) in
 * memoized components, so a streamed token walks a few dozen fibers instead of one per message.
 */
export function MessageList({ ids, children }: MessageListProps): ReactNode {
  // Groups equal to the previous ones keep their identity, so their memoized component skips.
  const previous = useRef<readonly (readonly string[])[]>([])
  const groups = useMemo(() => groupIds(ids, previous.current), [ids])
  useEffect(() => {
    previous.current = groups
  }, [groups])
  return groups.map((group) => <RowGroup key={group[0]} ids={group} render={children} />)
}

const RowGroup = memo(function RowGroup({ ids, render }: { ids: readonly string[]; render: (id: string) => ReactNode }): ReactNode {
  return ids.map((id) => {
    const row = render(id)
    return isValidElement(row) && row.key !== null ? row : <Fragment key={id}>{row}</Fragment>
  })
})
