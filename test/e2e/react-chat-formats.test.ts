import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Download, Page } from 'playwright'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { importTranscript } from '../../packages/formats/src/index.js'
import { nodeSqlite } from '../../packages/formats/src/node.js'
import { DB, openCodeDb } from '../../packages/formats/test/fixtures/opencode.js'
import { chats, composer, picker, rows, rowText } from './chat-page.js'
import { launchChromium, screenshot, serve, sharedBuild, type Served } from './harness.js'
import { watchPageErrors } from '../support/page-errors.js'

// Transcripts from other tools in the React demo: dropped on the app or picked with "Import…",
// imported with progress and opened; every chat exports as unified JSON or an OPA archive.

// A real Claude Code session (../shared/samples, see its README): 61 lines, one real fork
// (the /exit chain and the prompt after resume are sibling roots), two importer warnings.
const SAMPLE = fileURLToPath(
  new URL(
    '../../../shared/samples/claude-code/entire_cc-2.1.7_fork-after-exit-resume.head.jsonl',
    import.meta.url,
  ),
)
const SAMPLE_NAME = 'entire_cc-2.1.7_fork-after-exit-resume.head.jsonl'
const SESSION = '20b81bf8-77cd-4205-8ac9-727b573a70e4'
const sampleText = readFileSync(SAMPLE, 'utf8')
/** The raw line of the sample with this uuid, as Claude Code wrote it. */
const line = (uuid: string): { message: { content: string } } =>
  sampleText
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((o) => o.uuid === uuid)
const RESUMED_PROMPT = line('3b4071cb-5793-4cf8-9939-cfabf29e51a5').message.content
const EXIT_CAVEAT = line('80d37894-a47f-486c-a1f4-bcbcd1cb9b20').message.content
const NOT_A_TRANSCRIPT = {
  name: 'notes.txt',
  mimeType: 'text/plain',
  buffer: Buffer.from('Shopping list\n- eggs\n- {"not": "a transcript"}\n'),
}

let outDir: string
let served: Served
let browser: Browser
let context: BrowserContext
let pageErrors: () => void

beforeAll(async () => {
  outDir = await sharedBuild('react-chat')
  served = await serve('react-chat', outDir)
  browser = await launchChromium()
}, 180_000)
afterAll(async () => {
  await browser?.close()
  await served?.close()
})
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true })
  pageErrors = watchPageErrors(context)
})
afterEach(async () => {
  try {
    pageErrors()
  } finally {
    await context.close()
  }
})

const open = async (): Promise<Page> => {
  const page = await context.newPage()
  await page.goto(served.url)
  await composer(page).waitFor()
  return page
}
const importInput = (page: Page) => page.getByLabel('Import transcripts')
const card = (page: Page, name: string) =>
  page.getByRole('region', { name: 'Imports' }).locator('li.import-job').filter({ hasText: name })

interface ProgressState {
  file: string
  phase: string
  value: number | null
  max: number | null
}

/**
 * Records, frame by frame, every state the import progress bars go through (file, phase, value,
 * max), so a test sees the bar that the import of a small file shows for a few frames only.
 */
const watchProgress = (page: Page): Promise<void> =>
  page.evaluate(() => {
    const seen: ProgressState[] = []
    const last = new Map<string, ProgressState>()
    ;(window as unknown as { __progress: ProgressState[] }).__progress = seen
    const tick = (): void => {
      for (const p of document.querySelectorAll<HTMLProgressElement>('.imports progress')) {
        const file = p.closest('li')?.querySelector('.import-name')?.textContent ?? ''
        const state = {
          file,
          phase: p.dataset.phase ?? '',
          value: p.hasAttribute('value') ? p.value : null,
          max: p.hasAttribute('max') ? p.max : null,
        }
        const before = last.get(file)
        if (
          !before ||
          before.phase !== state.phase ||
          before.value !== state.value ||
          before.max !== state.max
        ) {
          seen.push(state)
          last.set(file, state)
        }
      }
      requestAnimationFrame(tick)
    }
    tick()
  })
const progressSeen = (page: Page, file: string): Promise<ProgressState[]> =>
  page.evaluate(
    (f) => (window as unknown as { __progress: ProgressState[] }).__progress.filter((s) => s.file === f),
    file,
  )

/** Files made in the page (no transfer from the test process while the page is timed). */
const filesInPage = (page: Page, files: { name: string; text: string }[]) =>
  page.evaluateHandle((list) => {
    const data = new DataTransfer()
    for (const f of list) data.items.add(new File([f.text], f.name))
    return data
  }, files)

/** Drags files over the page and drops them on the transcript, as a file manager would. */
async function drop(
  page: Page,
  files: { name: string; text: string }[] | Awaited<ReturnType<typeof filesInPage>>,
): Promise<void> {
  const dataTransfer = Array.isArray(files) ? await filesInPage(page, files) : files
  await page.dispatchEvent('.transcript', 'dragenter', { dataTransfer })
  await page.dispatchEvent('.transcript', 'dragover', { dataTransfer })
  await page.locator('.drop-overlay').waitFor()
  await page.dispatchEvent('.transcript', 'drop', { dataTransfer })
  await page.locator('.drop-overlay').waitFor({ state: 'detached' })
}

/** Starts timing the page's frames; `longestFrame` then says how long the page was stuck at most. */
const watchFrames = (page: Page): Promise<void> =>
  page.evaluate(() => {
    const frames: number[] = []
    ;(window as unknown as { __frames: number[] }).__frames = frames
    const tick = (t: number): void => {
      frames.push(t)
      requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
  })
const longestFrame = (page: Page): Promise<number> =>
  page.evaluate(() => {
    const f = (window as unknown as { __frames: number[] }).__frames
    return Math.max(...f.slice(1).map((t, i) => t - f[i]))
  })

/** A long, linear Claude Code session: `turns` prompts and answers of about 800 bytes each. */
function longSession(turns: number): string {
  const lines: string[] = []
  let parent: string | null = null
  const t0 = Date.UTC(2026, 0, 5)
  const filler = 'lorem ipsum dolor '.repeat(40)
  for (let i = 0; i < turns; i++) {
    const at = (ms: number): string => new Date(t0 + i * 2_000 + ms).toISOString()
    const common = {
      isSidechain: false,
      userType: 'external',
      cwd: '/work/long',
      sessionId: 'long-session',
      version: '2.1.20',
    }
    lines.push(
      JSON.stringify({
        ...common,
        parentUuid: parent,
        type: 'user',
        uuid: `u-${i}`,
        timestamp: at(0),
        message: { role: 'user', content: `Question ${i}: ${filler}` },
      }),
    )
    lines.push(
      JSON.stringify({
        ...common,
        parentUuid: `u-${i}`,
        type: 'assistant',
        uuid: `a-${i}`,
        timestamp: at(1_000),
        message: {
          id: `msg_${i}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-opus-4-5',
          content: [{ type: 'text', text: `Answer ${i}: ${filler}` }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 10, output_tokens: 100 },
        },
      }),
    )
    parent = `a-${i}`
  }
  return `${lines.join('\n')}\n`
}

/** Opens a chat's export menu in the sidebar and saves what the chosen item downloads. */
async function exportChat(
  page: Page,
  title: RegExp,
  item: 'Export as unified JSON' | 'Export as OPA archive',
): Promise<{ download: Download; bytes: Buffer }> {
  const row = chats(page).filter({ hasText: title })
  await row.hover()
  await row.getByRole('button', { name: 'Export chat' }).click()
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    row.getByRole('menu', { name: 'Export chat' }).getByRole('menuitem', { name: item }).click(),
  ])
  expect(await download.failure()).toBeNull()
  return { download, bytes: readFileSync((await download.path())!) }
}

describe('react-chat: transcripts in and out', () => {
  it('a dropped Claude Code session imports with progress and opens on its newest branch, fork and all', async () => {
    const page = await open()
    await watchProgress(page)
    // Two files in one drop: each is imported on its own, the transcript opens, the other says why not.
    await drop(page, [
      { name: SAMPLE_NAME, text: sampleText },
      { name: NOT_A_TRANSCRIPT.name, text: NOT_A_TRANSCRIPT.buffer.toString() },
    ])

    const done = card(page, SAMPLE_NAME)
    await expect.poll(() => done.getAttribute('data-state'), { timeout: 20_000 }).toBe('done')
    // The bar showed bytes read (up to the file's size), then entries written (up to 29).
    const seen = await progressSeen(page, SAMPLE_NAME)
    const reads = seen.filter((s) => s.phase === 'read')
    const writes = seen.filter((s) => s.phase === 'write')
    expect(reads.length + writes.length).toBeGreaterThan(0)
    for (const s of reads) expect(s.max).toBe(Buffer.byteLength(sampleText))
    for (const s of writes) expect(s.max).toBe(29)
    expect(await done.locator('.import-result button.link').textContent()).toMatch(
      /^ok, works, can you now tell me why a single prompt/,
    )
    expect(await done.locator('.import-facts > *').allTextContents()).toEqual([
      '29 entries',
      expect.stringMatching(/^2 warnings/),
    ])
    expect((await done.locator('.import-warnings li code').allTextContents()).sort()).toEqual([
      'missing-parent',
      'unpaired-call',
    ])

    // The session opened: its title, and the first prompt of the branch the user was on last.
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/c/${SESSION}`)
    await expect
      .poll(() => page.locator('.topbar h1').textContent())
      .toMatch(/^ok, works, can you now tell me why a single prompt/)
    const first = rows(page, 'user').first()
    await expect.poll(() => rowText(first)).toBe(RESUMED_PROMPT)
    await expect.poll(() => picker(first).textContent()).toBe('2 / 2')
    expect(await chats(page).count()).toBe(1)

    const failed = card(page, NOT_A_TRANSCRIPT.name)
    await expect.poll(() => failed.getAttribute('data-state')).toBe('error')
    expect(await failed.getByRole('alert').textContent()).toMatch(
      /^Not a transcript this app can read \(Claude Code, Codex, Gemini CLI, OpenCode, unified agent-history JSON, OPA, or a ChatGPT, Claude\.ai or Open WebUI export\)\. Nothing was imported\.$/,
    )
    // The first prompt and its picker in view, both cards in the sidebar.
    await first.scrollIntoViewIfNeeded()
    await screenshot(page, 'react-import')
    // The warnings, one click away.
    expect(await done.locator('.import-warnings ul').isVisible()).toBe(false)
    await done.getByText('2 warnings').click()
    expect(await done.locator('.import-warnings ul').isVisible()).toBe(true)

    // The other branch: the /exit chain before the resume, its markup-looking text shown as text.
    await picker(first).getByRole('button', { name: 'Previous version' }).click()
    await expect.poll(() => rowText(rows(page, 'user').first())).toBe(EXIT_CAVEAT)
    expect(await picker(rows(page, 'user').first()).textContent()).toBe('1 / 2')
    expect(await rows(page).count()).toBe(3)
    expect(await page.locator('local-command-caveat, local-command-stdout, command-name').count()).toBe(0)
  })

  it('"Import…" picks a file; the chat exports as unified JSON with every entry and as an OPA archive', async () => {
    const page = await open()
    const [chooser] = await Promise.all([
      page.waitForEvent('filechooser'),
      page.getByRole('button', { name: 'Import…' }).click(),
    ])
    expect(chooser.isMultiple()).toBe(true)
    await chooser.setFiles(SAMPLE)
    await expect.poll(() => new URL(page.url()).hash, { timeout: 20_000 }).toBe(`#/c/${SESSION}`)
    await expect.poll(() => rowText(rows(page, 'user').first())).toBe(RESUMED_PROMPT)

    // What the same importer makes of the file in Node: the entries the download must hold.
    const [expected] = (await importTranscript(readFileSync(SAMPLE))).sessions
    expect(expected.entries).toHaveLength(29)

    const unified = await exportChat(page, /^ok, works/, 'Export as unified JSON')
    expect(unified.download.suggestedFilename()).toBe(`${expected.meta.title}.json`)
    const doc = JSON.parse(unified.bytes.toString('utf8'))
    expect(doc.schema_version).toBe('1.0')
    expect(doc.session.id).toBe(SESSION)
    expect(doc.messages.map((m: { uuid: string }) => m.uuid).sort()).toEqual(
      expected.entries.map((e) => e.id).sort(),
    )
    const parents = new Map(expected.entries.map((e) => [e.id, e.parent_id]))
    for (const m of doc.messages as { uuid: string; parent_uuid: string | null }[])
      expect(m.parent_uuid).toBe(parents.get(m.uuid))
    // Both branches are in it, the fork at the roots; the active path is the resumed one.
    expect(doc.graph.is_linear).toBe(false)
    expect(doc.graph.active_path[0]).toBe('3b4071cb-5793-4cf8-9939-cfabf29e51a5')
    expect(doc.graph.active_path).toHaveLength(26)
    // And it imports back to the same tree.
    const back = (await importTranscript(unified.bytes.toString('utf8'))).sessions[0]
    expect(back.entries.map((e) => [e.id, e.parent_id]).sort()).toEqual(
      expected.entries.map((e) => [e.id, e.parent_id]).sort(),
    )

    // OPA: a ZIP holding the active path only (OPA histories are linear).
    const opa = await exportChat(page, /^ok, works/, 'Export as OPA archive')
    expect(opa.download.suggestedFilename()).toBe(`${expected.meta.title}.opa`)
    expect(opa.bytes.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]))
    const fromOpa = await importTranscript(new Uint8Array(opa.bytes))
    expect(fromOpa.format).toBe('opa')
    expect(fromOpa.sessions[0].entries.map((e) => e.id)).toEqual(doc.graph.active_path)
    // The menu closed after each choice.
    expect(await page.getByRole('menu', { name: 'Export chat' }).count()).toBe(0)
  })

  it('a file that is not a transcript, and one imported before, say why and add nothing', async () => {
    const page = await open()
    await importInput(page).setInputFiles(NOT_A_TRANSCRIPT)
    const failed = card(page, NOT_A_TRANSCRIPT.name)
    await expect.poll(() => failed.getAttribute('data-state')).toBe('error')
    expect(await failed.getByRole('alert').textContent()).toContain('Not a transcript this app can read')
    expect(await chats(page).count()).toBe(0)
    await expect.poll(() => page.getByText('No chats yet.').isVisible()).toBe(true)
    expect(new URL(page.url()).hash).toBe('')
    await failed.getByRole('button', { name: `Dismiss ${NOT_A_TRANSCRIPT.name}` }).click()
    expect(await card(page, NOT_A_TRANSCRIPT.name).count()).toBe(0)

    // The same session twice: the second import is refused, the first stays as it was.
    await importInput(page).setInputFiles(SAMPLE)
    await expect
      .poll(() => card(page, SAMPLE_NAME).getAttribute('data-state'), { timeout: 20_000 })
      .toBe('done')
    await importInput(page).setInputFiles(SAMPLE)
    const again = card(page, SAMPLE_NAME).nth(1)
    await expect.poll(() => again.getAttribute('data-state'), { timeout: 20_000 }).toBe('error')
    expect(await again.getByRole('alert').textContent()).toBe(
      `Session ${SESSION} is already in the store (imported before?). Nothing was imported.`,
    )
    expect(await chats(page).count()).toBe(1)
    // The messages the chat shows: its active path (29 entries in all, over its branches).
    expect(await chats(page).first().locator('.count').textContent()).toBe('26 messages')
  })

  it('a 5 MB session imports without stalling the page, with entries-written progress, and opens at its newest messages', async () => {
    const text = longSession(3_000)
    expect(text.length).toBeGreaterThan(4_500_000)
    const page = await open()
    const files = await filesInPage(page, [{ name: 'long.jsonl', text }])
    await watchProgress(page)
    await watchFrames(page)
    await drop(page, files)
    await expect
      .poll(() => card(page, 'long.jsonl').getAttribute('data-state'), { timeout: 60_000 })
      .toBe('done')
    await expect.poll(() => rows(page).count()).toBe(200)
    // Bytes read up to the size, then entries written in chunks, rising, out of all 6,000.
    const seen = await progressSeen(page, 'long.jsonl')
    const reads = seen.filter((s) => s.phase === 'read')
    const writes = seen.filter((s) => s.phase === 'write')
    expect(reads.at(-1)).toMatchObject({ value: text.length, max: text.length })
    expect(writes.length).toBeGreaterThan(0)
    for (const [i, s] of writes.entries()) {
      expect(s.max).toBe(6_000)
      expect(s.value).toBeGreaterThan(i === 0 ? 0 : writes[i - 1].value!)
    }
    // The page kept drawing frames while it imported and opened the session (measured: ~180 ms
    // at most, the parse of a batch of lines; rendering all 6,000 rows at once took seconds).
    expect(await longestFrame(page)).toBeLessThan(1_000)
    expect(await card(page, 'long.jsonl').locator('.import-facts > *').first().textContent()).toBe(
      '6,000 entries',
    )

    // The newest messages first (a messagesTail page of 200 blocks); earlier ones on request.
    expect(await rowText(rows(page, 'assistant').last())).toMatch(/^Answer 2999: lorem ipsum/)
    const earlier = page.getByRole('button', { name: /^Show earlier messages/ })
    expect(await earlier.textContent()).toBe('Show earlier messages (5,800 not shown)')
    await earlier.click()
    // The next 200 blocks (and, with the top of the list in view, the reader scrolled up: more).
    await expect.poll(() => rows(page).count()).toBeGreaterThanOrEqual(400)
    expect(
      await rows(page, 'user')
        .filter({ hasText: /^Question 2800: lorem ipsum/ })
        .count(),
    ).toBe(1)
  })

  it('an OpenCode SQLite database imports in the page, sql.js loading its wasm from the app', async () => {
    const db = await openCodeDb(await nodeSqlite())
    const page = await open()
    await importInput(page).setInputFiles({
      name: 'opencode.db',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from(db),
    })
    const done = card(page, 'opencode.db')
    await expect.poll(() => done.getAttribute('data-state'), { timeout: 20_000 }).toBe('done')
    expect(await done.locator('.import-result button.link').textContent()).toBe('FizzBuzz in two languages')
    expect((await done.locator('.import-facts > *').allTextContents()).slice(0, 2)).toEqual([
      '11 entries',
      '+2 more sessions',
    ])
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/c/${DB.main}`)
    expect(await rows(page, 'user').count()).toBeGreaterThan(0)
    await expect.poll(() => chats(page).count()).toBe(3)
  })

  it('a ChatGPT export with an edited prompt and a regenerated reply shows both forks with the picker, after a reload too', async () => {
    // ../shared/samples/chatgpt: 13 nodes; "so cool bro" was edited into "hi again", the joke regenerated.
    const file = fileURLToPath(
      new URL(
        '../../../shared/samples/chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json',
        import.meta.url,
      ),
    )
    const page = await open()
    await importInput(page).setInputFiles(file)
    const done = card(page, 'librechat_chatgpt-2024_edit-and-regenerate-forks.json')
    await expect.poll(() => done.getAttribute('data-state'), { timeout: 20_000 }).toBe('done')
    expect(await done.locator('.import-result button.link').textContent()).toBe('Assist user with summary')
    await expect.poll(() => new URL(page.url()).hash).toBe('#/c/d5dc5307-6807-41a0-8b04-4acee626eeb7')
    // Where the user left it (current_node): 6 visible messages, the hidden system message not among them.
    await expect.poll(() => rows(page).count()).toBe(6)
    const edited = rows(page, 'user').nth(1)
    await expect.poll(() => rowText(edited)).toBe('hi again')
    expect(await picker(edited).textContent()).toBe('2 / 2')
    await expect.poll(() => picker(rows(page, 'assistant').last()).textContent()).toBe('2 / 2')
    expect(await picker(rows(page, 'user').first()).count()).toBe(0)

    // The prompt before the edit, and its own two messages.
    await picker(edited).getByRole('button', { name: 'Previous version' }).click()
    await expect.poll(() => rowText(rows(page, 'user').nth(1))).toBe('so cool bro')
    await expect.poll(() => rows(page).count()).toBe(6)
    expect(await picker(rows(page, 'user').nth(1)).textContent()).toBe('1 / 2')
    expect(await rowText(rows(page, 'user').last())).toBe('tell me a story')

    // After a reload the stored tree still has both forks, on the branch last shown.
    await page.reload()
    await composer(page).waitFor()
    await expect.poll(() => rowText(rows(page, 'user').nth(1)), { timeout: 20_000 }).toBe('so cool bro')
    expect(await picker(rows(page, 'user').nth(1)).textContent()).toBe('1 / 2')
    await picker(rows(page, 'user').nth(1)).getByRole('button', { name: 'Next version' }).click()
    await expect.poll(() => rowText(rows(page, 'user').nth(1))).toBe('hi again')
    await expect.poll(() => picker(rows(page, 'assistant').last()).textContent()).toBe('2 / 2')
    await picker(rows(page, 'assistant').last()).getByRole('button', { name: 'Previous version' }).click()
    await expect.poll(() => picker(rows(page, 'assistant').last()).textContent()).toBe('1 / 2')
  })
})
