import type { MessageItem, SessionEntry } from './model.js'
import { roleOf } from './sealed-entry.js'

// Items are derived once per entry object, so an unchanged entry keeps an identical item and a
// live `messages$` list can be compared element by element.
const cache = new WeakMap<SessionEntry, MessageItem>()

export function itemOf(entry: SessionEntry): MessageItem {
  let item = cache.get(entry)
  if (!item) {
    item =
      entry.kind === 'message'
        ? Object.freeze(
            entry.origin
              ? { entry_id: entry.id, message: entry.message, origin: entry.origin }
              : { entry_id: entry.id, message: entry.message },
          )
        : Object.freeze({
            entry_id: entry.id,
            custom: Object.freeze({ custom_type: entry.custom_type, data: entry.data }),
          })
    cache.set(entry, item)
  }
  return item
}

/** The filter of `session::messages` step 4, shared by the read and the live query. */
export function passes(
  entry: SessionEntry,
  roles: readonly string[] | null | undefined,
  includeCustom: boolean,
): boolean {
  if (entry.kind === 'custom') return includeCustom && !roles
  // The role is clear: a held sealed entry is filtered without being opened.
  return !roles || roles.includes(roleOf(entry))
}
