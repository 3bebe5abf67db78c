// README examples marked `<!-- docs-test: browser -->` are whole apps: each runs here in a page
// (real IndexedDB), gets a message typed and sent, shows the reply, and after a reload (the module
// run again, the page's URL kept) shows the same chat again. readme-examples.test.ts type-checks
// them against the built packages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { userEvent } from 'vitest/browser'
import { blocksOf, directiveWords, label } from './readme-parse.js'

const sources = import.meta.glob(
  ['/README.md', '/packages/*/README.md', '/examples/README.md', '/test/bench/README.md'],
  { query: '?raw', import: 'default', eager: true },
) as Record<string, string>
const pages = Object.entries(sources)
  .flatMap(([path, text]) => blocksOf(path.slice(1), text))
  .filter((b) => directiveWords(b, 'browser') !== undefined)

/** What each README's app answers to "Hello docs": its model (assistant-ui), or its route (AI SDK, answered below). */
const REPLIES: Record<string, string> = {
  'packages/assistant-ui/README.md': 'You said: Hello docs',
  'packages/ai-sdk/README.md': 'Hi from the route',
}

// The AI SDK example posts to the app's own `/api/chat`: answered here as a route would, with the
// SDK's UI message stream.
const realFetch = globalThis.fetch
beforeAll(() => {
  globalThis.fetch = async (input, init) => {
    const url = new URL(
      typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      location.href,
    )
    if (url.pathname !== '/api/chat') return realFetch(input, init)
    const parts = [
      { type: 'start' },
      { type: 'start-step' },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Hi from ' },
      { type: 'text-delta', id: 't1', delta: 'the route' },
      { type: 'text-end', id: 't1' },
      { type: 'finish-step' },
      { type: 'finish' },
    ]
    const body = `${parts.map((p) => `data: ${JSON.stringify(p)}\n\n`).join('')}data: [DONE]\n\n`
    return new Response(body, {
      headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
    })
  }
})
afterAll(() => {
  globalThis.fetch = realFetch
})

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = performance.now()
  while (!check()) {
    if (performance.now() - start > timeoutMs)
      throw new Error(`timed out waiting for ${what}; page: ${document.body.innerText.slice(0, 500)}`)
    await new Promise((r) => requestAnimationFrame(r))
  }
}

let runs = 0
/** Runs the example as a page load does: a fresh `#root`, the module evaluated anew. */
async function load(file: string, line: number, lang: string): Promise<HTMLElement> {
  document.getElementById('root')?.remove()
  const root = document.createElement('div')
  root.id = 'root'
  document.body.append(root)
  await import(/* @vite-ignore */ `/${file}.L${line}.${lang}?run=${++runs}`)
  return root
}

describe.each(pages.map((b) => [label(b), b] as const))('%s', (_name, b) => {
  it('sends a message, shows the reply, and shows the chat again after a reload', async () => {
    const reply = REPLIES[b.file]
    expect(reply, `${b.file}: say in REPLIES what its app answers`).toBeDefined()
    history.replaceState(null, '', location.pathname + location.search)

    let root = await load(b.file, b.line, b.lang)
    await until('the message box', () => root.querySelector('[aria-label="Message"]') !== null)
    const input = root.querySelector<HTMLElement>('[aria-label="Message"]')!
    await userEvent.fill(input, 'Hello docs')
    const send = [...root.querySelectorAll('button')].find((x) => x.textContent === 'Send')!
    await until('Send to be enabled', () => !send.disabled)
    await userEvent.click(send)
    await until('the reply', () => root.innerText.includes(reply) && root.innerText.includes('Hello docs'))
    expect(location.hash.length).toBeGreaterThan(1)

    root = await load(b.file, b.line, b.lang)
    await until(
      'the chat after a reload',
      () => root.innerText.includes('Hello docs') && root.innerText.includes(reply),
    )
  })
})
