import type {
  ContentBlock,
  FileBlock,
  FunctionCallBlock,
  FunctionResultBlock,
  ImageBlock,
} from '@colloquy/core'
import { useAttachmentUrl } from '@colloquy/react'
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react'
import { Icon } from './Icon.js'

// Every string below is rendered as a text node: message content is data, never markup.

const json = (value: unknown): string => JSON.stringify(value, null, 2) ?? 'null'

/** Only real image types become an <img>; anything else in an image block is shown as a file. */
const isImage = (b: ImageBlock): boolean =>
  /^image\/(png|jpe?g|gif|webp|svg\+xml|avif)$/.test(b.mime) &&
  (b.data !== '' || b.attachment_id !== undefined)

/** True once the element has come near the viewport: images of a long chat load as it is read. */
function useNearViewport<T extends Element>(): [RefObject<T | null>, boolean] {
  const ref = useRef<T>(null)
  const [near, setNear] = useState(false)
  useEffect(() => {
    const el = ref.current
    if (!el || near) return
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && setNear(true), {
      rootMargin: '400px',
    })
    io.observe(el)
    return () => io.disconnect()
  }, [near])
  return [ref, near]
}

/** An image whose bytes are in the attachment store: read (as an object URL) once it is near view. */
function StoredImage({ block, sessionId }: { block: ImageBlock; sessionId: string }): ReactNode {
  const [ref, near] = useNearViewport<HTMLElement>()
  const url = useAttachmentUrl(near ? sessionId : null, near ? block.attachment_id : null)
  return (
    <figure ref={ref} className="image" data-block="image" data-attachment={block.attachment_id}>
      {url ? (
        <img src={url} alt="Image in the message" />
      ) : (
        <span className="image-placeholder">{url === null && near ? 'Image not available' : 'Image'}</span>
      )}
    </figure>
  )
}

function FileChip({ block, sessionId }: { block: FileBlock; sessionId: string }): ReactNode {
  const [ref, near] = useNearViewport<HTMLSpanElement>()
  const url = useAttachmentUrl(near ? sessionId : null, near ? block.attachment_id : null)
  return (
    <span ref={ref} className="file" data-block="file">
      {url ? (
        <a href={url} download={block.name}>
          {block.name}
        </a>
      ) : (
        block.name
      )}{' '}
      · {block.mime} · {Math.ceil(block.size / 1024)} KB
    </span>
  )
}

function Thinking({ text, live }: { text: string; live: boolean }): ReactNode {
  return (
    <details className="thinking" open={live}>
      <summary>{live ? 'Thinking…' : 'Thought process'}</summary>
      <p className="text">{text}</p>
    </details>
  )
}

/** A tool call with its result (found by `function_call_id` in the same message), as one card. */
export function ToolCard({
  call,
  result,
  pending,
  name,
  sessionId,
}: {
  sessionId?: string
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
        <span className="tool-state">
          {result ? (error ? 'failed' : 'done') : pending ? 'running…' : 'no result'}
        </span>
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
          <div className="tool-result">
            <Blocks blocks={result.content} live={false} sessionId={sessionId} />
          </div>
        </div>
      )}
    </div>
  )
}

export function Blocks({
  blocks,
  live,
  sessionId,
}: {
  blocks: readonly ContentBlock[]
  live: boolean
  sessionId?: string
}): ReactNode {
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
        return (
          <p key={i} className={`text${last ? ' streaming' : ''}`} data-block="text">
            {b.text}
          </p>
        )
      case 'thinking':
        return <Thinking key={i} text={b.text} live={last} />
      case 'function_call':
        return <ToolCard key={i} call={b} result={results.get(b.id)} pending={live} sessionId={sessionId} />
      case 'function_result':
        return calls.has(b.function_call_id) ? null : <ToolCard key={i} result={b} sessionId={sessionId} />
      case 'image':
        if (!isImage(b))
          return (
            <span key={i} className="file">
              Image ({b.mime}) not shown
            </span>
          )
        return b.data === '' && sessionId ? (
          <StoredImage key={i} block={b} sessionId={sessionId} />
        ) : (
          <figure key={i} className="image" data-block="image">
            <img src={`data:${b.mime};base64,${b.data}`} alt="Image in the message" loading="lazy" />
          </figure>
        )
      case 'file':
        return sessionId ? (
          <FileChip key={i} block={b} sessionId={sessionId} />
        ) : (
          <span key={i} className="file" data-block="file">
            {b.name} · {b.mime} · {Math.ceil(b.size / 1024)} KB
          </span>
        )
    }
  })
}
