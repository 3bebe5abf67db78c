export { useColloquyRuntime, type ColloquyRuntimeOptions } from './use-colloquy-runtime.js'
export { toThreadMessage, toThreadMessageLike, partsFromThreadMessage } from './mapping.js'
