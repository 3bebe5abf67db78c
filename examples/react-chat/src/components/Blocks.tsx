import type { ContentBlock, FunctionCallBlock, FunctionResultBlock, ImageBlock } from '@colloquy/core'
import type { ReactNode } from 'react'
import { Icon } from './Icon.js'

// Every string below is rendered as a text node: message content is data, never markup.

const json = (value: unknown): string => JSON.stringify(value, null, 2) ?? 'null'

/** Only real image types become an <img>; anything else in an image block is shown as a file. */
const isImage = (b: ImageBlock): boolean => /^image\/(png|jpe?g|gif|webp|svg\+xml|avif)$/.test(b.mime) && b.data !== ''

function Thinking({ text, live }: { text: string; live: boolean }): ReactNode {
  return (
    <details className="thinking" open={live}>
      <summary>{live ? 'Thinking…' : 'Thought process'}</summary>
      <p className="text">{text}</p>
    </details>
  )
}

/** A tool call with its result (found by `function_call_id` in the same message), as one card. */
export function ToolCard({ call, result, pending, name }: {
  call?: FunctionCallBlock
  result?: { content: readonly ContentBlock[]; is_error?: boolean }
  pending?: boolean
  name?: string
}): ReactNode {
  const error = result?.is_error === true
  return (
    <div className={`tool${error ? ' tool-error' : ''}`} data-block="function_call">
      <div className="tool-head">
        <Icon name="tool" />
        <code>{call?.function_id ?? name ?? 'tool'}</code>
        <span className="tool-state">{result ? (error ? 'failed' : 'done') : pending ? 'running…' : 'no result'}</span>
      </div>
      {call && (
        <div className="tool-section">
          <span className="tool-label">Arguments</span>
          <pre>{json(call.arguments)}</pre>
        </div>
      )}
      {result && (
        <div className="tool-section" data-block="function_result">
          <span className="tool-label">Result</span>
          <div className="tool-result"><Blocks blocks={result.content} live={false} /></div>
        </div>
      )}
    </div>
  )
}

export function Blocks({ blocks, live }: { blocks: readonly ContentBlock[]; live: boolean }): ReactNode {
  const results = new Map<string, FunctionResultBlock>()
  const calls = new Set<string>()
  for (const b of blocks) {
    if (b.type === 'function_result') results.set(b.function_call_id, b)
    if (b.type === 'function_call') calls.add(b.id)
  }
  // Blocks only ever grow at the end while streaming, so the index is a stable key.
  return blocks.map((b, i) => {
    const last = live && i === blocks.length - 1
    switch (b.type) {
      case 'text':
        return <p key={i} className={`text${last ? ' streaming' : ''}`} data-block="text">{b.text}</p>
      case 'thinking':
        return <Thinking key={i} text={b.text} live={last} />
      case 'function_call':
        return <ToolCard key={i} call={b} result={results.get(b.id)} pending={live} />
      case 'function_result':
        return calls.has(b.function_call_id) ? null : <ToolCard key={i} result={b} />
      case 'image':
        return isImage(b)
          ? <figure key={i} className="image" data-block="image"><img src={`data:${b.mime};base64,${b.data}`} alt="Image in the message" /></figure>
          : <span key={i} className="file">Image ({b.mime}) not shown</span>
      case 'file':
        return <span key={i} className="file" data-block="file">{b.name} · {b.mime} · {Math.ceil(b.size / 1024)} KB</span>
    }
  })
}
