import { useLayoutEffect, type ReactNode } from 'react'
import { createRoot } from 'react-dom/client'
import { ColloquyProvider } from '@colloquy/react'
import {
  AssistantRuntimeProvider,
  ThreadPrimitive,
  useAuiState,
  useLocalRuntime,
  type AssistantRuntime,
  type ChatModelAdapter,
  type ThreadMessageLike,
} from '@assistant-ui/react'
import { useColloquyRuntime } from '../../src/index.js'
import type { BenchContext, Workload } from '../../../../test/bench/types.js'
import {
  chunkText,
  measureR3,
  mounting,
  r3,
  r3Rows,
  r3Store,
  r3Texts,
  R3_MESSAGES,
  timedPass,
  type R3Pass,
} from '../../../../test/bench/subjects/r3.js'

/** A message row on assistant-ui's primitives; the streaming one reports what it committed. */
function Row(): ReactNode {
  r3.renders++
  const text = useAuiState((s) => s.message.content.map((p) => (p.type === 'text' ? p.text : '')).join(''))
  const last = useAuiState((s) => s.message.isLast)
  useLayoutEffect(() => {
    if (last) r3.shown(text)
  }, [text, last])
  return <p>{text}</p>
}

const Thread = ({ runtime }: { runtime: AssistantRuntime }): ReactNode => (
  <AssistantRuntimeProvider runtime={runtime}>
    <ThreadPrimitive.Root>
      <ThreadPrimitive.Messages components={{ UserMessage: Row, AssistantMessage: Row }} />
    </ThreadPrimitive.Root>
  </AssistantRuntimeProvider>
)

/** Streams `chunks` snapshots, each once the previous one is on screen. */
const streamingModel = (chunks: number, done: () => void): ChatModelAdapter => ({
  async *run() {
    for (let i = 0; i < chunks; i++) {
      const text = chunkText(i)
      const shown = r3.until(text)
      yield { content: [{ type: 'text', text }] }
      await shown
    }
    done()
  },
})

/**
 * Mounts a thread on the runtime `useRuntime` makes for a model streaming `chunks` snapshots;
 * `pass()` waits for the 998 messages, then times the question and the streamed reply.
 */
function mountThread(
  chunks: number,
  useRuntime: (model: ChatModelAdapter) => AssistantRuntime,
  wrap: (app: ReactNode) => ReactNode = (app) => app,
) {
  let runtime: AssistantRuntime | undefined
  let finished!: () => void
  const done = new Promise<void>((r) => (finished = r))
  const model = streamingModel(chunks, finished)
  function App(): ReactNode {
    runtime = useRuntime(model)
    return <Thread runtime={runtime} />
  }
  const root = createRoot(document.createElement('div'))
  root.render(wrap(<App />))
  return {
    runtime: () => runtime,
    async pass(): Promise<R3Pass> {
      await mounting('the thread', () => runtime?.thread.getState().messages.length === R3_MESSAGES - 2)
      return timedPass(async () => {
        runtime!.thread.append({ role: 'user', content: [{ type: 'text', text: 'go' }] })
        await done
      })
    },
    unmount: () => root.unmount(),
  }
}

/** The thread holds 998 messages; the run adds the question and the streamed reply (1,000). */
async function colloquyPass(ctx: BenchContext, chunks: number): Promise<R3Pass> {
  const { store, session_id } = await r3Store(ctx, 'r3-assistant-ui')
  const thread = mountThread(
    chunks,
    (model) => useColloquyRuntime({ session_id, model }),
    (app) => <ColloquyProvider store={store}>{app}</ColloquyProvider>,
  )
  const result = await thread.pass()
  await mounting('the thread', () => !thread.runtime()!.thread.getState().isRunning)
  thread.unmount()
  await store.close()
  return result
}

async function localPass(chunks: number): Promise<R3Pass> {
  const thread = mountThread(chunks, useLocalRuntime)
  await mounting('the thread', () => thread.runtime() !== undefined)
  const initial: ThreadMessageLike[] = r3Texts().map(({ id, role, text }) => ({
    id,
    role,
    content: [{ type: 'text', text }],
  }))
  thread.runtime()!.thread.reset(initial)
  const result = await thread.pass()
  thread.unmount()
  return result
}

const COLLOQUY = 'colloquy useColloquyRuntime'
const LOCAL = 'assistant-ui useLocalRuntime'

const workload: Workload = {
  id: 'R3',
  title:
    'assistant-ui: 1,000 chunks into the last of 1,000 messages, useColloquyRuntime (IndexedDB) vs useLocalRuntime (memory)',
  env: 'browser',
  async run(ctx) {
    // assistant-ui itself spends ~0.1 s per chunk at this size (either runtime): one round each
    // keeps the workload within the runner's time limit.
    const runs = await measureR3(
      { [COLLOQUY]: (n: number) => colloquyPass(ctx, n), [LOCAL]: localPass },
      (m) => ctx.log(m),
      1,
    )
    return r3Rows(
      'assistant-ui 0.15',
      COLLOQUY,
      LOCAL,
      runs,
      'Colloquy persists the streaming reply to IndexedDB (updateMessage, at most once per 16 ms frame) and shows each chunk from memory at once; the runtime gets a repository whose unchanged items keep their identity, handed to it without re-rendering the component that holds it',
      1,
    )
  },
}

export default workload
