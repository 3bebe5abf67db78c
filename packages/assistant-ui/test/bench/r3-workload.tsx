import { useLayoutEffect, type ReactNode } from 'react'
import { createRoot } from 'react-dom/client'
import { createStore, indexedDbStorage, type AgentMessage } from '@colloquy/core'
import { ColloquyProvider } from '@colloquy/react'
import { createThread } from '@colloquy/parts'
import {
  AssistantRuntimeProvider, ThreadPrimitive, useAuiState, useLocalRuntime,
  type AssistantRuntime, type ChatModelAdapter, type ThreadMessageLike,
} from '@assistant-ui/react'
import { useColloquyRuntime } from '../../src/index.js'
import type { BenchContext, Workload } from '../../../../test/bench/types.js'
import { chunkText, measureR3, r3, r3Rows, R3_MESSAGES, type R3Pass } from '../../../../test/bench/subjects/r3.js'

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
    <ThreadPrimitive.Root><ThreadPrimitive.Messages components={{ UserMessage: Row, AssistantMessage: Row }} /></ThreadPrimitive.Root>
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

const history = (n: number): AgentMessage[] => Array.from({ length: n }, (_, i) =>
  i % 2 === 0
    ? { role: 'user', content: [{ type: 'text', text: `question ${i}` }], timestamp: i }
    : { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }], stop_reason: 'end', model: 'm', provider: 'p', timestamp: i })

async function until(check: () => boolean): Promise<void> {
  const end = performance.now() + 60_000
  while (!check()) {
    if (performance.now() > end) throw new Error('timed out mounting the thread')
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** The thread holds 998 messages; the run adds the question and the streamed reply (1,000). */
async function colloquyPass(ctx: BenchContext, chunks: number): Promise<R3Pass> {
  const store = await createStore({ storage: indexedDbStorage({ name: ctx.dbName('r3-assistant-ui') }) })
  const session_id = await createThread(store)
  await store.appendMany({ session_id, messages: history(R3_MESSAGES - 2) })
  let runtime!: AssistantRuntime
  let finished!: () => void
  const done = new Promise<void>((r) => (finished = r))
  const model = streamingModel(chunks, finished)
  function App(): ReactNode {
    runtime = useColloquyRuntime({ session_id, model })
    return <Thread runtime={runtime} />
  }
  const root = createRoot(document.createElement('div'))
  root.render(<ColloquyProvider store={store}><App /></ColloquyProvider>)
  await until(() => runtime?.thread.getState().messages.length === R3_MESSAGES - 2)
  r3.renders = 0
  const started = performance.now()
  runtime.thread.append({ role: 'user', content: [{ type: 'text', text: 'go' }] })
  await done
  const wallMs = performance.now() - started
  const renders = r3.renders
  await until(() => !runtime.thread.getState().isRunning)
  root.unmount()
  await store.close()
  return { wallMs, renders }
}

async function localPass(chunks: number): Promise<R3Pass> {
  let runtime!: AssistantRuntime
  let finished!: () => void
  const done = new Promise<void>((r) => (finished = r))
  const model = streamingModel(chunks, finished)
  function App(): ReactNode {
    runtime = useLocalRuntime(model)
    return <Thread runtime={runtime} />
  }
  const root = createRoot(document.createElement('div'))
  root.render(<App />)
  await until(() => runtime !== undefined)
  const initial: ThreadMessageLike[] = history(R3_MESSAGES - 2).map((m, i) => ({ id: `m${i}`, role: m.role === 'user' ? 'user' : 'assistant', content: [{ type: 'text', text: (m.content[0] as { text: string }).text }] }))
  runtime.thread.reset(initial)
  await until(() => runtime.thread.getState().messages.length === R3_MESSAGES - 2)
  r3.renders = 0
  const started = performance.now()
  runtime.thread.append({ role: 'user', content: [{ type: 'text', text: 'go' }] })
  await done
  const wallMs = performance.now() - started
  const renders = r3.renders
  root.unmount()
  return { wallMs, renders }
}

const COLLOQUY = 'colloquy useColloquyRuntime'
const LOCAL = 'assistant-ui useLocalRuntime'

const workload: Workload = {
  id: 'R3',
  title: 'assistant-ui: 1,000 chunks into the last of 1,000 messages, useColloquyRuntime (IndexedDB) vs useLocalRuntime (memory)',
  env: 'browser',
  async run(ctx) {
    // assistant-ui itself spends ~0.1 s per chunk at this size (either runtime): one round each
    // keeps the workload within the runner's time limit.
    const runs = await measureR3({ [COLLOQUY]: (n: number) => colloquyPass(ctx, n), [LOCAL]: localPass }, (m) => ctx.log(m), 1)
    return r3Rows('assistant-ui 0.15', COLLOQUY, LOCAL, runs, 'Colloquy persists every chunk to IndexedDB (updateMessage, coalesced by core) and hands the runtime the whole repository each time, which it merges message by message', 1)
  },
}

export default workload
