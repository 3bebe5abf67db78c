export { useColloquyRuntime, type ColloquyRuntimeOptions } from './use-colloquy-runtime.js'
export { useThreadListAdapter, ARCHIVED_KEY } from './thread-list.js'
export { toThreadMessage, toThreadMessageLike, partsFromThreadMessage, fromPart } from './mapping.js'
