import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import { createThread, ownReply } from '@colloquy/parts'

// What the framework adapters' tests share: a reply source the test can hold mid-stream, and
// "tabs" (stores over one IndexedDB database, related through core's multi-tab relay).

/** A gate a stream waits at: `open()` lets it go on. */
export interface Gate {
  readonly wait: Promise<void>
  open(): void
}
export function gate(): Gate {
  let open!: () => void
  const wait = new Promise<void>((r) => (open = r))
  return { wait, open }
}

/**
 * The cumulative texts of a reply streamed as `count` tokens ("t0 t1 …"), pausing before token
 * `holdAt` until `hold` opens; stops early when `signal` aborts.
 */
export async function* tokens(
  count: number,
  options: { hold?: Gate; holdAt?: number; signal?: AbortSignal; prefix?: string } = {},
): AsyncGenerator<string> {
  let text = ''
  for (let i = 0; i < count; i++) {
    if (options.signal?.aborted) return
    if (options.hold && i === (options.holdAt ?? 0)) await options.hold.wait
    if (options.signal?.aborted) return
    text += `${i === 0 ? '' : ' '}${options.prefix ?? 't'}${i}`
    yield text
    // A macrotask between tokens, as a network stream has: each token is its own render.
    await new Promise((r) => setTimeout(r, 0))
  }
}

/** A database name of its own and a way to open "tabs" on it. */
export function tabs(prefix: string): { name: string; open(): Promise<Store>; drop(): void } {
  const name = `${prefix}-${crypto.randomUUID()}`
  return {
    name,
    open: () => createStore({ storage: indexedDbStorage({ name }) }),
    drop: () => void indexedDB.deleteDatabase(name),
  }
}

/** Resolves when `check` passes, polling each macrotask (up to `ms`). */
export async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** `pairs` finished question/answer exchanges ("q0"/"a0", …) appended to `session_id`. */
export async function appendExchanges(store: Store, session_id: string, pairs: number): Promise<void> {
  for (let i = 0; i < pairs; i++) {
    await store.append({
      session_id,
      message: { role: 'user', content: [{ type: 'text', text: `q${i}` }], timestamp: i },
    })
    await store.append({
      session_id,
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: `a${i}` }],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: i,
      },
    })
  }
}

/**
 * What a tab closed mid-reply leaves on `db`: a thread holding the question "q", part of the
 * reply ("half a rep") and the session still working. Returns the thread's id.
 */
export async function interruptedThread(db: { open(): Promise<Store> }): Promise<string> {
  const dead = await db.open()
  const session_id = await createThread(dead)
  await dead.append({
    session_id,
    message: { role: 'user', content: [{ type: 'text', text: 'q' }], timestamp: 1 },
  })
  // Recorded as a writer of this browser records its reply (another device's would not be marked).
  ownReply(dead, session_id)
  await dead.setStatus({ session_id, status: 'working', reason: 'replying' })
  await dead.append({
    session_id,
    message: {
      role: 'assistant',
      content: [{ type: 'text', text: 'half a rep' }],
      stop_reason: 'end',
      model: 'm',
      provider: 'p',
      timestamp: 2,
    },
  })
  await dead.close()
  return session_id
}
