import { afterEach, beforeEach, expect } from 'vitest'
import type { Subscription } from 'rxjs'
import type { EventConfig, EventMap, FunctionId, FunctionMap, TriggerType } from '@colloquy/core'
import {
  sequentialIds,
  testClock,
  type ClientFactory,
  type ClientFactoryOptions,
  type ConformanceClient,
  type TestClock,
} from './client.js'

type Req<K extends FunctionId> = FunctionMap[K][0]
type Res<K extends FunctionId> = FunctionMap[K][1]

export interface Delivery {
  type: TriggerType
  payload: unknown
}

/**
 * A "function F" of the contract's suite: every binding added to it delivers into one ordered
 * list, so "delivery i to F" indexes across trigger types and two bindings deliver twice.
 */
export class Sink {
  private readonly list: Delivery[] = []
  private readonly subs: Subscription[] = []

  constructor(private readonly h: Harness) {}

  /** Registers a binding; the returned function unbinds it. */
  bind<T extends TriggerType>(type: T, config?: EventConfig | null): () => void {
    const sub = this.h.client.on(type, config).subscribe((payload) => this.list.push({ type, payload }))
    this.subs.push(sub)
    return () => sub.unsubscribe()
  }

  /** Deliveries so far (of one type, or all in arrival order), after the client settled. */
  async got<T extends TriggerType>(type: T): Promise<EventMap[T][]>
  async got(): Promise<Delivery[]>
  async got(type?: TriggerType): Promise<unknown[]> {
    await this.h.client.settle()
    return type ? this.list.filter((d) => d.type === type).map((d) => d.payload) : [...this.list]
  }

  close(): void {
    for (const s of this.subs) s.unsubscribe()
  }
}

/** Per-test state of the suite: a fresh client over a fresh clock and id counters. */
export class Harness {
  private current?: { client: ConformanceClient; clock: TestClock }
  private sinks: Sink[] = []

  /** `skip`: scenarios (by name) a client cannot run, each skipped visibly, never passed. */
  constructor(
    factory: ClientFactory,
    limits?: ClientFactoryOptions['limits'],
    skip?: (name: string) => boolean,
  ) {
    beforeEach(async (ctx) => {
      if (skip?.(ctx.task.name)) ctx.skip()
      const clock = testClock()
      this.current = {
        clock,
        client: await factory({ now: clock.now, newId: sequentialIds(), ...(limits && { limits }) }),
      }
    })
    afterEach(async () => {
      for (const s of this.sinks) s.close()
      this.sinks = []
      await this.current?.client.close()
      this.current = undefined
    })
  }

  get client(): ConformanceClient {
    if (!this.current) throw new Error('no client outside a test')
    return this.current.client
  }

  get clock(): TestClock {
    if (!this.current) throw new Error('no clock outside a test')
    return this.current.clock
  }

  call<K extends FunctionId>(fn: K, request: Req<K>): Promise<Res<K>> {
    return this.client.call(fn, request) as Promise<Res<K>>
  }

  /** For requests the types forbid on purpose (schema rejections, extra keys). */
  raw(fn: string, request: unknown): Promise<unknown> {
    return this.client.call(fn, request)
  }

  sink(): Sink {
    const s = new Sink(this)
    this.sinks.push(s)
    return s
  }

  /** The contract's "a bare session": `session::create {}`. */
  async bare(request: Req<'session::create'> = {}): Promise<string> {
    return (await this.call('session::create', request)).session_id
  }

  /** "a user message X appended". */
  say(
    session_id: string,
    text: string,
    extra: Partial<Req<'session::append'>> = {},
  ): Promise<Res<'session::append'>> {
    return this.call('session::append', { session_id, message: user(text), ...extra })
  }

  async meta(session_id: string) {
    const got = await this.call('session::get', { session_id })
    if (!got) throw new Error(`session ${session_id} is gone`)
    return got.meta
  }

  async ids(request: Req<'session::messages'>): Promise<string[]> {
    return (await this.call('session::messages', request)).messages.map((m) => m.entry_id)
  }

  async entry(session_id: string, entry_id: string) {
    const got = await this.call('session::get-message', { session_id, entry_id })
    if (!got) throw new Error(`entry ${entry_id} of ${session_id} is missing`)
    return got.entry
  }

  /** Subscribes and returns the registration error (thrown or signalled), or undefined. */
  async bindError(type: TriggerType, config: unknown): Promise<Error | undefined> {
    let error: unknown
    try {
      const sub = this.client
        .on(type, config as EventConfig)
        .subscribe({ error: (e: unknown) => void (error = e) })
      await this.client.settle()
      sub.unsubscribe()
    } catch (e) {
      error = e
    }
    return error === undefined ? undefined : (error as Error)
  }
}

/** The contract's code of an error, whether it kept its class or crossed a wire as a string. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  const message = error instanceof Error ? error.message : String(error)
  return /^(session\/[a-z_]+):/.exec(message)?.[1]
}

/** Awaits a call that must fail with `code`; returns the error for further checks. */
export async function rejects(call: Promise<unknown>, code: string): Promise<Error> {
  const error = await call.then(
    (value) => {
      throw new Error(`expected ${code}, but the call returned ${JSON.stringify(value)}`)
    },
    (e: unknown) => e,
  )
  expect(codeOf(error), String(error)).toBe(code)
  return error as Error
}

// ---- the contract's fixtures (section 6) -------------------------------------------------

export const text = (t: string) => ({ type: 'text' as const, text: t })

export const user = (t: string) => ({ role: 'user' as const, content: [text(t)], timestamp: 0 })

export const assistant = (
  content: FunctionMap['session::update-message'][0]['content'],
  stop_reason: 'end' | 'function_call' = 'end',
) => ({
  role: 'assistant' as const,
  content,
  stop_reason,
  model: 'test-model',
  provider: 'test',
  timestamp: 0,
})

/** "an empty assistant message". */
export const emptyAssistant = () => assistant([])

/** "a final assistant message X". */
export const finalAssistant = (t: string) => assistant([text(t)])

/** "an assistant call C to F [saying S]". */
export const assistantCall = (id: string, function_id: string, saying?: string) =>
  assistant(
    [
      { type: 'thinking' as const, text: `thinking before ${id}` },
      ...(saying === undefined ? [] : [text(saying)]),
      { type: 'function_call' as const, id, function_id, arguments: { cmd: 'ls' } },
    ],
    'function_call',
  )

/** "a function result for C". */
export const functionResult = (function_call_id: string, function_id = 'shell::run') => ({
  role: 'function_result' as const,
  function_call_id,
  function_id,
  content: [text('README.md')],
  details: { code: 0 },
  is_error: false,
  timestamp: 0,
})

/** "a custom entry of type T" (bookkeeping, `kind: "custom"`). */
export const customEntry = (custom_type: string) => ({ custom_type, data: { marker: custom_type } })

/** A `role: "custom"` transcript message. */
export const customMessage = (custom_type: string, t: string) => ({
  role: 'custom' as const,
  custom_type,
  content: [text(t)],
  timestamp: 0,
})

export const T0 = 1_000_000
