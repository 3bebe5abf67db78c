import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

// Heap figures that a test compares: each taken after a full collection, so garbage left by
// earlier work neither hides a leak (a base full of garbage that is collected later) nor makes
// one up. V8 exposes `gc` to a context made after --expose_gc is set, with no flag on the command line.

setFlagsFromString('--expose_gc')
/** Runs a full garbage collection. */
export const collectGarbage = runInNewContext('gc') as () => void

/** The live JS heap, in bytes, after a full collection. */
export function liveHeap(): number {
  collectGarbage()
  return process.memoryUsage().heapUsed
}

/** The live ArrayBuffer memory (outside the JS heap), in bytes, after a full collection. */
export function liveArrayBuffers(): number {
  collectGarbage()
  return process.memoryUsage().arrayBuffers
}
