import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  enginesUnderTest,
  launchEngine,
  type EngineBrowser,
  type EngineContext,
  type EnginePage as Page,
} from '../support/engines.js'
import { noteLimit } from '../support/engine-limit.js'
import { expectedReply } from './chat-page.js'
import { serve, sharedBuild, type Served } from './harness.js'

// The demo's main path (send, stream, edit into a branch, switch branches, reload, offline) in
// each engine, through the engine driver: Chromium (Playwright), WebKit (WebKitWebDriver and
// MiniBrowser), Gecko (firefox-esr over BiDi). The driver speaks only "evaluate a script", so the
// page is driven as a user's events would drive it: clicks, text typed into the composer with
// input events, Enter as a key event; and every wait is for something the page shows.

let outDir: string

// --- In the page: the user's actions and what they see ---------------------------------------

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>

/** Runs `check(arg)` in the page until it returns something truthy; resolves with that. */
async function waitFor<A, T>(
  page: Page,
  check: (arg: A) => T,
  arg: A,
  what: string,
  timeoutMs = 20_000,
): Promise<Truthy<T>> {
  return page.evaluate(
    async ({ src, arg, what, timeoutMs }) => {
      const fn = new Function(`return (${src})`)() as (a: unknown) => unknown
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const v = fn(arg)
        // An element found is reported as found (a node does not serialize).
        if (v) return v instanceof Node ? true : v
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
        await new Promise((r) => setTimeout(r, 20))
      }
    },
    { src: check.toString(), arg, what, timeoutMs },
  ) as Promise<Truthy<T>>
}

/** What the page shows: the rows' roles and texts, the pickers, the chat's state. */
interface View {
  rows: Array<{ role: string; text: string; picker: string | null; live: boolean }>
  busy: string | null
  badge: string | null
  hash: string
}
const view = (): View => ({
  rows: [...document.querySelectorAll('li.message')].map((li) => ({
    role: li.getAttribute('data-role') ?? '',
    text: [...li.querySelectorAll('.bubble > [data-block="text"]')]
      .map((e) => e.textContent ?? '')
      .join('\n'),
    picker: li.querySelector('.branch-picker .branch-count')?.textContent ?? null,
    live: li.getAttribute('aria-busy') === 'true',
  })),
  busy: document.querySelector('[aria-label="Messages"]')?.getAttribute('aria-busy') ?? null,
  badge: document.querySelector('.sync-badge [role="status"]')?.textContent ?? null,
  hash: location.hash,
})
const read = (page: Page): Promise<View> => page.evaluate(view)

/** Types `text` into the textarea labelled `label` as a keyboard would: the value, then an input event. */
const type = (page: Page, label: string, text: string): Promise<void> =>
  page.evaluate(
    ({ label, text }) => {
      const box = document.querySelector<HTMLTextAreaElement>(`textarea[aria-label="${label}"]`)
      if (!box) throw new Error(`no textarea "${label}"`)
      box.focus()
      // React tracks the value it set; the prototype's setter is what typing goes through.
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!.call(box, text)
      box.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }))
    },
    { label, text },
  )

/** Presses Enter in the composer. */
const pressEnter = (page: Page): Promise<void> =>
  page.evaluate(() => {
    const box = document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')!
    for (const t of ['keydown', 'keypress', 'keyup'])
      box.dispatchEvent(
        new KeyboardEvent(t, {
          key: 'Enter',
          code: 'Enter',
          keyCode: 13,
          which: 13,
          bubbles: true,
          cancelable: true,
        }),
      )
  })

/** Clicks the button labelled `label` (in the `nth` row of `role`, if given). */
const click = (page: Page, label: string, within?: { role: string; nth: number }): Promise<void> =>
  page.evaluate(
    ({ label, within }) => {
      const scope = within
        ? document.querySelectorAll(`li.message[data-role="${within.role}"]`)[within.nth]
        : document
      const button = [...(scope?.querySelectorAll<HTMLButtonElement>('button') ?? [])].find(
        (b) => b.getAttribute('aria-label') === label || b.textContent?.trim() === label,
      )
      if (!button) throw new Error(`no button "${label}"`)
      if (button.disabled) throw new Error(`button "${label}" is disabled`)
      button.click()
    },
    { label, within },
  )

/** Opens `url` and waits for the composer. */
async function open(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await waitFor(
    page,
    () => document.querySelector('textarea[aria-label="Message"]'),
    undefined,
    'the composer',
  )
  // `view` in the page, for the checks that wait on it.
  await page.evaluate((src) => {
    ;(window as unknown as { __view: () => View }).__view = new Function(`return (${src})`)()
  }, view.toString())
}

/** The chat once idle with `n` rows, the last reply complete. */
const idleWith = (page: Page, n: number, reply: string): Promise<View> =>
  waitFor(
    page,
    ({ n, reply }) => {
      const v = (window as unknown as { __view: () => View }).__view()
      return (
        v.busy === 'false' &&
        v.rows.length === n &&
        v.rows.at(-1)!.role === 'assistant' &&
        v.rows.at(-1)!.text === reply &&
        v
      )
    },
    { n, reply },
    `${n} rows ending in the reply "${reply.slice(0, 30)}…"`,
  )

/**
 * Sends `prompt` and waits for its whole reply; resolves with the lengths its text went through,
 * as a MutationObserver saw them while it streamed.
 */
async function ask(page: Page, prompt: string, rowsBefore: number): Promise<number[]> {
  await page.evaluate(() => {
    const w = window as unknown as { __lengths: number[]; __watch?: MutationObserver }
    w.__lengths = []
    w.__watch?.disconnect()
    w.__watch = new MutationObserver(() => {
      const live = document.querySelector('li.message[data-role="assistant"][aria-busy="true"]')
      if (!live) return
      const n = [...live.querySelectorAll('.bubble > [data-block="text"]')]
        .map((e) => e.textContent ?? '')
        .join('').length
      if (w.__lengths.at(-1) !== n) w.__lengths.push(n)
    })
    w.__watch.observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    })
  })
  await type(page, 'Message', prompt)
  await pressEnter(page)
  await idleWith(page, rowsBefore + 2, expectedReply(prompt))
  return page.evaluate(() => {
    const w = window as unknown as { __lengths: number[]; __watch?: MutationObserver }
    w.__watch?.disconnect()
    return w.__lengths
  })
}

// --- The suite ---------------------------------------------------------------------------

beforeAll(async () => {
  outDir = await sharedBuild('react-chat')
}, 180_000)

for (const engine of enginesUnderTest())
  describe(engine, () => {
    let browser: EngineBrowser
    let served: Served
    let context: EngineContext
    beforeAll(async () => {
      browser = await launchEngine(engine)
    }, 120_000)
    afterAll(async () => {
      await browser?.close()
    })
    // Each test: its own server (the offline test shuts it down) and its own storage.
    beforeEach(async () => {
      served = await serve('react-chat', outDir)
      context = await browser.newContext()
    })
    afterEach(async () => {
      await context?.close()
      await served?.close()
    })

    it('sends and streams a reply, edits the question into a branch, switches branches, and shows the same chat after a reload', async () => {
      const page = await context.newPage()
      await open(page, served.url)

      // Send: the reply streams in step by step, then the chat is idle with the whole reply.
      const lengths = await ask(page, 'Why is the sky blue?', 0)
      expect(lengths.length).toBeGreaterThan(5)
      for (let i = 1; i < lengths.length; i++) expect(lengths[i]).toBeGreaterThan(lengths[i - 1]!)
      const sent = await read(page)
      expect(sent.rows.map((r) => [r.role, r.text])).toEqual([
        ['user', 'Why is the sky blue?'],
        ['assistant', expectedReply('Why is the sky blue?')],
      ])
      expect(sent.hash).toMatch(/^#\/c\/s_/)

      // Edit the question: a sibling branch with its own reply.
      await click(page, 'Edit message', { role: 'user', nth: 0 })
      await waitFor(
        page,
        () => document.querySelector('textarea[aria-label="Edit message"]'),
        undefined,
        'the editor',
      )
      await type(page, 'Edit message', 'Tell me about volcanoes')
      await click(page, 'Save & send')
      const edited = await idleWith(page, 2, expectedReply('Tell me about volcanoes'))
      expect(edited.rows.map((r) => [r.role, r.text, r.picker])).toEqual([
        ['user', 'Tell me about volcanoes', '2 / 2'],
        ['assistant', expectedReply('Tell me about volcanoes'), null],
      ])

      // Back to the first version: its own reply comes back with it.
      await click(page, 'Previous version', { role: 'user', nth: 0 })
      const first = await idleWith(page, 2, expectedReply('Why is the sky blue?'))
      expect(first.rows.map((r) => [r.text, r.picker])).toEqual([
        ['Why is the sky blue?', '1 / 2'],
        [expectedReply('Why is the sky blue?'), null],
      ])
      // And forward again, to stay there.
      await click(page, 'Next version', { role: 'user', nth: 0 })
      const chosen = await idleWith(page, 2, expectedReply('Tell me about volcanoes'))

      // A new load of the chat's address (a query makes it a load, not a hash change): the same
      // chat, on the chosen branch, read back from IndexedDB.
      await open(page, `${served.url}?reload=1${chosen.hash}`)
      const reloaded = await idleWith(page, 2, expectedReply('Tell me about volcanoes'))
      expect(reloaded.rows).toEqual(chosen.rows)
      expect(reloaded.hash).toBe(chosen.hash)
    })

    it('goes offline and keeps working: the local model replies, and with the server gone the app loads from its service worker with the chat', async (ctx) => {
      if (engine === 'webkit')
        noteLimit(ctx, 'going offline is emulated in the page (classic WebDriver has no network emulation)')
      const page = await context.newPage()
      await open(page, served.url)
      await ask(page, 'Remember me offline', 0)
      expect((await read(page)).badge).toBe('Local only')
      // The shell is cached once the service worker controls the page.
      await waitFor(
        page,
        () =>
          navigator.serviceWorker?.controller !== null && navigator.serviceWorker?.controller !== undefined,
        undefined,
        'a service worker in control',
      )

      await context.setOffline(true)
      await waitFor(
        page,
        () => document.querySelector('.sync-badge [role="status"]')?.textContent === 'Offline',
        undefined,
        'the badge to say Offline',
      )
      // The model is local: chatting goes on with no network.
      const lengths = await ask(page, 'Still here?', 2)
      expect(lengths.length).toBeGreaterThan(5)
      const offline = await read(page)
      expect(offline.rows.map((r) => r.text)).toEqual([
        'Remember me offline',
        expectedReply('Remember me offline'),
        'Still here?',
        expectedReply('Still here?'),
      ])

      // Nothing answers at the app's address any more: only the service worker's cache can.
      await served.close()
      await open(page, `${served.url}?reload=1${offline.hash}`)
      expect((await idleWith(page, 4, expectedReply('Still here?'))).rows).toEqual(offline.rows)
      await ask(page, 'And after a reload?', 4)
      await context.setOffline(false)
    })
  })
