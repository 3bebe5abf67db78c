import {
  cloneElement,
  Fragment,
  isValidElement,
  memo,
  useEffect,
  useMemo,
  useRef,
  type ReactNode,
} from 'react'
import { groupIds } from '@colloquy/kit'

export interface MessageListProps {
  /** The rows' ids in order: what `useMessageIds` returns, or any list of distinct ids. */
  ids: readonly string[]
  /**
   * Renders one row (a component that reads `useEntry`), keyed by its id. It is called once per
   * id while it stays the same function: an append renders the new row only. A new function
   * renders every row again, as a new `map` callback would, so pass a stable one (module scope,
   * or `useCallback` over what the rows show).
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

type RenderRow = (id: string) => ReactNode

// A row element takes its id as key (made once per row, see below); anything else is wrapped.
const keyed = (id: string, row: ReactNode): ReactNode =>
  isValidElement(row) ? (
    row.key !== null ? (
      row
    ) : (
      cloneElement(row, { key: id })
    )
  ) : (
    <Fragment key={id}>{row}</Fragment>
  )

const RowGroup = memo(function RowGroup({
  ids,
  render,
}: {
  ids: readonly string[]
  render: RenderRow
}): ReactNode {
  // Rows this function already made are handed back as the same elements, which React skips
  // without rendering them: a group that gains a row renders that row only.
  const made = useRef<{ render: RenderRow; rows: Map<string, ReactNode> } | null>(null)
  if (made.current?.render !== render || made.current.rows.size > 2 * ids.length)
    made.current = { render, rows: new Map() }
  const rows = made.current.rows
  return ids.map((id) => {
    if (!rows.has(id)) rows.set(id, keyed(id, render(id)))
    return rows.get(id)
  })
})
