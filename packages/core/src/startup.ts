// What the code fetched on first use takes from the code every app loads at start. Each module
// the store fetches on first use (`import()`) imports that code from here, never from its own
// module. esbuild gives one chunk to each set of importers of a module: a startup module
// imported by a different set of on-demand modules each would be a startup chunk of its own
// (ten files, each with its imports and exports, where one does). Through here, every startup
// module they use has the same importers and shares one chunk.
//
// The helpers the write path shares (event payloads, the entry and session checks, the
// operations' table) are here too: no startup module imports them, so they are not at start;
// through here they share one on-demand chunk instead of one each. Nothing the main entry
// (`index.ts`) reaches may import this file: everything re-exported here would then be at start.
export { fold } from './changes.js'
export { SessionError, invalid } from './errors.js'
export { emitAdded, emitUpdated } from './emit.js'
export { itemOf, passes } from './items.js'
export { jsonEqual, metadataMatches } from './json.js'
export { LIMITS, checkBoundedString, isValidId } from './limits.js'
export { KINDS, ORDERS, ROLES, STATUSES } from './model.js'
export { entryNotFound, requireParent } from './ops/entries.js'
export { notFound, requireMeta } from './ops/lifecycle.js'
export { compareFor, selectSessions, sortKey } from './ops/select.js'
export { operations } from './ops/index.js'
export { pathTo } from './path.js'
export { StaleHeadError } from './storage.js'
export {
  array, blob, bool, bounded, id, int, json, jsonObject, lit, name, object, oneOf, opt, parseWith, req, str, tagged, uint, type Parser,
} from './validate.js'
