import { createStore, memoryStorage, TRIGGER_TYPES, type Store, type TriggerType } from '../src/index.js'

// The validation and limit tests compare whole states and event lists: they need a store whose
// ids and clock are the same on every run, and every event it emits.

/**
 * A memory store (one tab) whose clock stands at 1,000,000 and whose ids count up: sessions
 * s_001, s_002, …, entries e_001, e_002, ….
 */
export function numberedStore(): Promise<Store> {
  let s = 0
  let e = 0
  return createStore({
    storage: memoryStorage(),
    multiTab: false,
    now: () => 1_000_000,
    newId: (k) =>
      k === 'session' ? `s_${String(++s).padStart(3, '0')}` : `e_${String(++e).padStart(3, '0')}`,
  })
}

/** Every event `store` emits from now on, in order, with its trigger type. */
export function recordEvents(store: Store): Array<[TriggerType, unknown]> {
  const events: Array<[TriggerType, unknown]> = []
  for (const type of TRIGGER_TYPES) store.on(type).subscribe((p) => events.push([type, p]))
  return events
}
