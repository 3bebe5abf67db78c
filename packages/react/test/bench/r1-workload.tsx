import {
  createStore,
  memoryStorage,
  type AgentMessage,
  type MessageItem,
  type SessionEntry,
  type Store,
} from '@colloquy/core'
import {
  memo,
  Profiler,
  useCallback,
  useEffect,
  useMemo,
  useState,
  type ProfilerOnRenderCallback,
  type ReactNode,
} from 'react'
import { createRoot } from 'react-dom/client'
// The profiling renderer: React.Profiler reports commits in the benchmark's production build too.
// It is only used to count: its bookkeeping (a clock read per fiber) would distort the timings.
import { createRoot as createProfilingRoot } from 'react-dom/profiling'
import type { BenchContext, BenchRow, Workload } from '../../../../test/bench/types.js'
import { ColloquyProvider, MessageList, useEntry, useMessageIds } from '../../src/index.js'

/**
 * R1 / R2: stream updates into the last message of a long transcript, rendered by React into a
 * detached container. R1 is the hooks' way (the list reads `useMessageIds`, each row
 * `useEntry`); R2 is the way of the AI SDK's `useChat` examples: the whole message array in
 * state, every row re-rendered on every token. Both read the same store the same way, so the
 * difference is rendering; "store only" is the floor both share (the updates with no UI).
 */
export interface R1Options {
  messages: number
  updates: number
}

export interface R1Run {
  /** With the production renderer. */
  wallMs: number
  /** React.Profiler `onRender` calls while streaming (profiling renderer). */
  commits: number
  /** Component renders (list and rows) per streamed update. */
  rendersPerUpdate: number
  /** Sum of React.Profiler `actualDuration`: time spent rendering (profiling renderer). */
  renderMs: number
}

interface Pass {
  wallMs: number
  commits: number
  renders: number
  renderMs: number
}

const counters = { renders: 0 }

const textOf = (content: AgentMessage['content'] | undefined): string =>
  (content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('')
const entryText = (entry: SessionEntry | null | undefined): string =>
  entry?.kind === 'message' ? textOf(entry.message.content) : ''

// ---- R1: the hooks ---------------------------------------------------------------------------

function HookRow({ session_id, entry_id }: { session_id: string; entry_id: string }): ReactNode {
  counters.renders++
  return <p data-id={entry_id}>{entryText(useEntry(session_id, entry_id).data)}</p>
}

function HookTranscript({ session_id }: { session_id: string }): ReactNode {
  counters.renders++
  const ids = useMessageIds({ session_id })
  return (
    <div>
      {ids.data?.map((id) => (
        <HookRow key={id} session_id={session_id} entry_id={id} />
      ))}
    </div>
  )
}

// React walks every sibling of an updated row (a clone and a bail-out each, in render and in
// each commit pass), so a flat list of a thousand rows costs it about 0.15 ms per token even
// when one row renders. <MessageList> renders the same flat list from the app's side and
// groups the rows itself; the chunked subject is the same idea written by the app.
function ListTranscript({ session_id }: { session_id: string }): ReactNode {
  counters.renders++
  const ids = useMessageIds({ session_id })
  const row = useCallback((id: string) => <HookRow session_id={session_id} entry_id={id} />, [session_id])
  return <div>{ids.data && <MessageList ids={ids.data}>{row}</MessageList>}</div>
}

const CHUNK = 50

const HookChunk = memo(function HookChunk({
  session_id,
  ids,
}: {
  session_id: string
  ids: readonly string[]
}): ReactNode {
  counters.renders++
  return ids.map((id) => <HookRow key={id} session_id={session_id} entry_id={id} />)
})

function ChunkedHookTranscript({ session_id }: { session_id: string }): ReactNode {
  counters.renders++
  const ids = useMessageIds({ session_id }).data
  const chunks = useMemo(() => {
    const out: (readonly string[])[] = []
    for (let i = 0; ids && i < ids.length; i += CHUNK) out.push(ids.slice(i, i + CHUNK))
    return out
  }, [ids])
  return (
    <div>
      {chunks.map((chunk) => (
        <HookChunk key={chunk[0]} session_id={session_id} ids={chunk} />
      ))}
    </div>
  )
}

// ---- R2: the whole list in state -------------------------------------------------------------

function PlainRow({ item }: { item: MessageItem }): ReactNode {
  counters.renders++
  return <p data-id={item.entry_id}>{textOf(item.message?.content)}</p>
}

function WholeListTranscript({ store, session_id }: { store: Store; session_id: string }): ReactNode {
  counters.renders++
  const [messages, setMessages] = useState<readonly MessageItem[]>([])
  useEffect(() => {
    const sub = store.messages$({ session_id }).subscribe((items) => setMessages(items))
    return () => sub.unsubscribe()
  }, [store, session_id])
  return (
    <div>
      {messages.map((item) => (
        <PlainRow key={item.entry_id} item={item} />
      ))}
    </div>
  )
}

// ---- driving ---------------------------------------------------------------------------------

async function transcript(options: R1Options): Promise<{ store: Store; session_id: string; last: string }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const { session_id } = await store.create({ title: 'bench' })
  const messages: AgentMessage[] = Array.from({ length: options.messages }, (_, i) =>
    i % 2 === 0
      ? { role: 'user', content: [{ type: 'text', text: `question ${i}` }], timestamp: i }
      : {
          role: 'assistant',
          content: [{ type: 'text', text: `answer ${i}` }],
          stop_reason: 'end',
          model: 'm',
          provider: 'p',
          timestamp: i,
        },
  )
  messages[messages.length - 1] = {
    role: 'assistant',
    content: [],
    stop_reason: 'end',
    model: 'm',
    provider: 'p',
    timestamp: options.messages,
  }
  const { last_entry_id } = await store.appendMany({ session_id, messages })
  return { store, session_id, last: last_entry_id }
}

/** Resolves once `el` shows `text`: the moment the streamed token is in the DOM. */
function textWatcher(el: Element): { until(text: string): Promise<void>; stop(): void } {
  let want: string | undefined
  let done: (() => void) | undefined
  const observer = new MutationObserver(() => {
    if (want !== undefined && el.textContent === want) {
      want = undefined
      done?.()
    }
  })
  observer.observe(el, { characterData: true, childList: true, subtree: true })
  return {
    until(text) {
      if (el.textContent === text) return Promise.resolve()
      want = text
      return new Promise((resolve, reject) => {
        // A token that never shows is a failed run, not a hung benchmark.
        const timer = setTimeout(
          () => reject(new Error(`the streamed text did not show within 10 s (${text.length} chars)`)),
          10_000,
        )
        done = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    },
    stop: () => observer.disconnect(),
  }
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 30_000
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

type Subject = 'hooks' | 'hooks-list' | 'hooks-chunked' | 'whole-list' | 'store-only'

async function pass(subject: Subject, options: R1Options, profiling: boolean): Promise<Pass> {
  const { store, session_id, last } = await transcript(options)
  const container = document.createElement('div')
  const root =
    subject === 'store-only' ? undefined : (profiling ? createProfilingRoot : createRoot)(container)
  let commits = 0
  let renderMs = 0
  const onRender: ProfilerOnRenderCallback = (_id, _phase, actualDuration) => {
    commits++
    renderMs += actualDuration
  }
  root?.render(
    <Profiler id={subject} onRender={onRender}>
      {subject === 'hooks' || subject === 'hooks-list' || subject === 'hooks-chunked' ? (
        <ColloquyProvider store={store}>
          {subject === 'hooks' ? (
            <HookTranscript session_id={session_id} />
          ) : subject === 'hooks-list' ? (
            <ListTranscript session_id={session_id} />
          ) : (
            <ChunkedHookTranscript session_id={session_id} />
          )}
        </ColloquyProvider>
      ) : (
        <WholeListTranscript store={store} session_id={session_id} />
      )}
    </Profiler>,
  )
  const row = (): Element | null => container.querySelector(`[data-id="${last}"]`)
  if (root)
    await waitFor(
      () =>
        container.childElementCount > 0 &&
        row() !== null &&
        container.firstElementChild!.childElementCount === options.messages,
      'the transcript to mount',
    )
  const watcher = root ? textWatcher(row()!) : undefined

  ;(globalThis as { gc?: () => void }).gc?.()
  counters.renders = 0
  commits = 0
  renderMs = 0
  let text = ''
  const started = performance.now()
  for (let i = 0; i < options.updates; i++) {
    text += `tok${i} `
    const shown = watcher?.until(text)
    await store.updateMessage({ session_id, entry_id: last, content: [{ type: 'text', text }] })
    await shown
  }
  const wallMs = performance.now() - started
  const run = { wallMs, commits, renders: counters.renders, renderMs }

  watcher?.stop()
  root?.unmount()
  await store.close()
  return run
}

const SUBJECTS = ['store-only', 'whole-list', 'hooks', 'hooks-list', 'hooks-chunked'] as const

/** Timed rounds per subject, interleaved; the median is reported (the machine may be busy). */
export const ROUNDS = 5

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * A warm-up of every pass at a tenth of the size; then `rounds` timed passes of each subject
 * on the production renderer, interleaved, and one counted pass on the profiling renderer.
 */
export async function measureR1(
  options: R1Options,
  log: (m: string) => void = () => {},
  rounds = ROUNDS,
): Promise<Record<Subject, R1Run>> {
  const small = { messages: Math.ceil(options.messages / 10), updates: Math.ceil(options.updates / 10) }
  for (const s of SUBJECTS) for (const profiling of [false, true]) await pass(s, small, profiling)
  const timed = new Map<Subject, Pass[]>(SUBJECTS.map((s) => [s, []]))
  for (let r = 0; r < rounds; r++) for (const s of SUBJECTS) timed.get(s)!.push(await pass(s, options, false))
  const out = {} as Record<Subject, R1Run>
  for (const s of SUBJECTS) {
    const counted = await pass(s, options, true)
    const walls = timed.get(s)!.map((p) => p.wallMs)
    out[s] = {
      wallMs: median(walls),
      commits: counted.commits,
      rendersPerUpdate: counted.renders / options.updates,
      renderMs: counted.renderMs,
    }
    log(
      `R1 ${s}: ${walls.map((w) => w.toFixed(0)).join(' / ')} ms (median ${out[s].wallMs.toFixed(0)}), ${counted.commits} commits, ${out[s].rendersPerUpdate} renders/update`,
    )
  }
  return out
}

const LABELS: Record<Subject, string> = {
  hooks: 'colloquy hooks',
  'hooks-list': 'colloquy hooks, <MessageList>',
  'hooks-chunked': 'colloquy hooks, chunked list',
  'whole-list': 'whole list (R2)',
  'store-only': 'store only',
}

const NOTES: Record<'hooks' | 'hooks-list' | 'hooks-chunked', string> = {
  hooks: '; the list maps ids to rows itself (a thousand sibling fibers)',
  'hooks-list': '; the same flat list through <MessageList>, which groups the rows itself',
  'hooks-chunked': `; rows grouped by ${CHUNK} in memoized chunks written by the app`,
}

export function r1Rows(runs: Record<Subject, R1Run>, options: R1Options): BenchRow[] {
  const WHOLE = LABELS['whole-list']
  const size = `${options.updates.toLocaleString('en-US')} updates into the last of ${options.messages.toLocaleString('en-US')} messages`
  const hookSubjects = ['hooks', 'hooks-list', 'hooks-chunked'] as const
  const rows: BenchRow[] = []
  for (const s of hookSubjects) {
    const faster = runs['whole-list'].wallMs / runs[s].wallMs
    rows.push({
      id: 'R1',
      subject: LABELS[s],
      metric: 'wall time',
      value: runs[s].wallMs,
      unit: 'ms',
      baseline: WHOLE,
      better: 'lower',
      target: '>= 5x faster than R2',
      pass: faster >= 5,
      note: `${size}; ${faster.toFixed(1)}x faster than re-rendering the whole list${NOTES[s]}`,
    })
  }
  rows.push(
    {
      id: 'R1',
      subject: WHOLE,
      metric: 'wall time',
      value: runs['whole-list'].wallMs,
      unit: 'ms',
      better: 'lower',
      note: `AI SDK useChat style: the message array in state, rows not memoized; wall times are medians of ${ROUNDS} rounds on react-dom/client`,
    },
    {
      id: 'R1',
      subject: LABELS['store-only'],
      metric: 'wall time',
      value: runs['store-only'].wallMs,
      unit: 'ms',
      better: 'lower',
      note: 'the same updates with no UI: the floor all subjects share',
    },
  )
  for (const s of hookSubjects) {
    rows.push({
      id: 'R1',
      subject: LABELS[s],
      metric: 'renders per update',
      value: runs[s].rendersPerUpdate,
      unit: 'components',
      baseline: WHOLE,
      better: 'lower',
      target: 'only the streaming message (1)',
      pass: runs[s].rendersPerUpdate === 1,
    })
  }
  rows.push({
    id: 'R1',
    subject: WHOLE,
    metric: 'renders per update',
    value: runs['whole-list'].rendersPerUpdate,
    unit: 'components',
    better: 'lower',
  })
  for (const s of [...hookSubjects, 'whole-list'] as const) {
    const first = s === 'hooks'
    rows.push(
      {
        id: 'R1',
        subject: LABELS[s],
        metric: 'commits',
        value: runs[s].commits,
        unit: 'commits',
        ...(s === 'whole-list' ? {} : { baseline: WHOLE }),
        ...(first ? { note: 'React.Profiler onRender calls while streaming, on react-dom/profiling' } : {}),
      },
      {
        id: 'R1',
        subject: LABELS[s],
        metric: 'render time',
        value: runs[s].renderMs,
        unit: 'ms',
        better: 'lower',
        ...(s === 'whole-list' ? {} : { baseline: WHOLE }),
        ...(first ? { note: 'sum of React.Profiler actualDuration, on react-dom/profiling' } : {}),
      },
    )
  }
  return rows
}

export const R1_OPTIONS: R1Options = { messages: 1000, updates: 1000 }

const workload: Workload = {
  id: 'R1',
  title: 'React: stream 1,000 updates into the last of 1,000 messages (hooks vs whole-list re-render, R2)',
  env: 'browser',
  async run(ctx: BenchContext) {
    return r1Rows(await measureR1(R1_OPTIONS, (m) => ctx.log(m)), R1_OPTIONS)
  },
}

export default workload
