import type { ReactNode } from 'react'
import type { Store } from '@colloquy/core'
import { ColloquyProvider } from '@colloquy/react'
import {
  AssistantRuntimeProvider,
  BranchPickerPrimitive,
  ThreadPrimitive,
  useAuiState,
  type AssistantRuntime,
  type ChatModelAdapter,
} from '@assistant-ui/react'
import { useColloquyRuntime } from '../src/index.js'
import { tokens, type Gate } from '../../../test/support/streaming.js'

/** Renders per message id: what a streamed token costs. */
export const renders = new Map<string, number>()

/** A message row on assistant-ui's own primitives: its text and its branch picker. */
function Row(): ReactNode {
  const id = useAuiState((s) => s.message.id)
  const text = useAuiState((s) => s.message.content.map((p) => (p.type === 'text' ? p.text : '')).join(''))
  renders.set(id, (renders.get(id) ?? 0) + 1)
  return (
    <div data-message={id}>
      <span data-text>{text}</span>
      <BranchPickerPrimitive.Root data-picker>
        <BranchPickerPrimitive.Previous>‹</BranchPickerPrimitive.Previous>
        <BranchPickerPrimitive.Number />/<BranchPickerPrimitive.Count />
        <BranchPickerPrimitive.Next>›</BranchPickerPrimitive.Next>
      </BranchPickerPrimitive.Root>
    </div>
  )
}

/** A model streaming `count` tokens, optionally held before token `holdAt`. */
export const tokenModel = (count: number, hold?: Gate, holdAt = 0, prefix = 't'): ChatModelAdapter => ({
  async *run({ abortSignal }) {
    for await (const text of tokens(count, { hold, holdAt, signal: abortSignal, prefix }))
      yield { content: [{ type: 'text', text }] }
  },
})

export interface HarnessProps {
  /** `null` while the app's store opens. */
  store: Store | null
  session_id: string | null
  model: ChatModelAdapter
  onRuntime: (r: AssistantRuntime) => void
  onSessionChange?: (id: string | null) => void
}

function Thread(props: Omit<HarnessProps, 'store'>): ReactNode {
  const runtime = useColloquyRuntime({
    session_id: props.session_id,
    model: props.model,
    onSessionChange: props.onSessionChange,
  })
  props.onRuntime(runtime)
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <ThreadPrimitive.Messages components={{ UserMessage: Row, AssistantMessage: Row }} />
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  )
}

export function Harness({ store, ...rest }: HarnessProps): ReactNode {
  return (
    <ColloquyProvider store={store}>
      <Thread {...rest} />
    </ColloquyProvider>
  )
}
