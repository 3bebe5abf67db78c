// What the code fetched on first use takes from the code every app loads at start. Each module
// the store fetches on first use (`import()`) imports that code from here, never from its own
// module. esbuild gives one chunk to each set of importers of a module: a startup module
// imported by a different set of on-demand modules each would be a startup chunk of its own
// (ten files, each with its imports and exports, where one does). Through here, every startup
// module they use has the same importers and shares one chunk.
// Only startup modules are re-exported here (code fetched later imports code fetched later
// directly), so no cycle runs through this file, and nothing the main entry (`index.ts`) reaches
// imports it.
export { fold } from './changes.js'
export { Engine } from './engine.js'
export { SessionError, invalid, storageFailure } from './errors.js'
export {
  ALL, BLOBS, ENTRIES, MARK, SESSIONS, STAMPS, entriesOf, isClosed, request, sessionRange, type Stamp, type Stamped,
} from './idb-storage.js'
export { itemOf, passes } from './items.js'
export { jsonEqual, metadataMatches } from './json.js'
export { LIMITS, checkBoundedString, checkDepth, isValidId } from './limits.js'
export { ERROR_KINDS, KINDS, ORDERS, ROLES, STATUSES, STOP_REASONS } from './model.js'
export { compareFor, selectSessions, sortKey } from './ops/select.js'
export { once, type Once } from './once.js'
export { pathTo } from './path.js'
export { isObject, isString, isTime, messageOf } from './relay.js'
export { StaleHeadError } from './storage.js'
export { array, at, fail, id, isPlainObject, json, jsonObject, oneOf, str, type Parser } from './validate.js'
