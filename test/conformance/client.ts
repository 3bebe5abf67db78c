import type { Observable } from 'rxjs'
import type { EventConfig, EventMap, TriggerType } from '@colloquy/core'

/**
 * What the conformance suite drives: the store in-process, or a server over HTTP. The suite is
 * written once against this and run over every storage and transport.
 */
export interface ConformanceClient {
  call(functionId: string, request: unknown): Promise<unknown>
  on<T extends TriggerType>(type: T, config?: EventConfig | null): Observable<EventMap[T]>
  /** Resolves once events of everything already awaited have been delivered (no-op in-process). */
  settle(): Promise<void>
  close(): Promise<void>
}

/** The contract's test clock: starts at 1000000 and moves only when a step advances it. */
export interface TestClock {
  now(): number
  advance(ms: number): void
}

/** Sequential ids per kind, as the contract's suite injects them: s_001, e_001, a_001, … */
export type IdSource = (kind: 'session' | 'entry' | 'attachment') => string

export interface ClientFactoryOptions {
  now: () => number
  newId: IdSource
  /** Store limits a scenario configures (27: `max_attachment_bytes: 4`). */
  limits?: { max_attachment_bytes?: number }
}

export type ClientFactory = (options: ClientFactoryOptions) => Promise<ConformanceClient>

export function testClock(start = 1_000_000): TestClock {
  let t = start
  return { now: () => t, advance: (ms) => void (t += ms) }
}

export function sequentialIds(): IdSource {
  const counters = { session: 0, entry: 0, attachment: 0 }
  return (kind) => `${kind[0]}_${String(++counters[kind]).padStart(3, '0')}`
}
