import { ready, type LiveState } from './live-state.js'
import { asIs, type Query, type Selection } from './query.js'

/**
 * A binding's view of its query: each raw state made into the hook's state, through the query's
 * selection, keeping the previous object while the selected value is equal. `last` is owned by
 * the binding (and may outlive one derivation, so a new key with an equal value keeps identity).
 */
export function deriver<Raw, T>(
  query: Query<Raw, T>,
  last: { current: LiveState<T> },
): (raw: LiveState<Raw>) => LiveState<T> {
  const selection = (query.derive?.create() ?? asIs) as Selection<Raw, T>
  let lastRaw: LiveState<Raw> | undefined
  return (raw) => {
    if (raw === lastRaw) return last.current
    lastRaw = raw
    const prev = last.current
    let next: LiveState<T>
    if (raw.status !== 'ready') next = raw as LiveState<never>
    else {
      const data = selection.select(raw.data)
      next = prev.status === 'ready' && selection.equal(prev.data, data) ? prev : ready(data)
    }
    return (last.current = next)
  }
}
