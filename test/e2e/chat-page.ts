import type { Locator, Page } from 'playwright'
import { expect } from 'vitest'
import { replySteps, textOf } from '../../examples/chat-kit/src/index.js'

// How the tests drive either demo app: both share these roles, labels and data attributes.

export const composer = (page: Page): Locator => page.getByRole('textbox', { name: 'Message' })
export const transcript = (page: Page): Locator => page.getByRole('list', { name: 'Messages' })
export const rows = (page: Page, role?: 'user' | 'assistant'): Locator =>
  page.locator(role ? `li.message[data-role="${role}"]` : 'li.message')
export const chats = (page: Page): Locator => page.getByRole('navigation', { name: 'Chats' }).locator('li')

/** The text blocks of a message row, as the reader sees them (not the text inside tool results). */
export const rowText = async (row: Locator): Promise<string> =>
  (await row.locator('.bubble > [data-block="text"]').allTextContents()).join('\n')

/** What the local model answers to `prompt` (its `variant`-th reply): it is deterministic. */
export const expectedReply = (prompt: string, variant = 0): string =>
  textOf([...replySteps({ prompt, variant, now: 0 })].at(-1)!)

/** Opens a blank chat (its session is created by the first message) and waits for it. */
export async function newChat(page: Page): Promise<void> {
  await page.getByRole('button', { name: /New chat$/ }).click()
  await page.getByRole('heading', { name: 'Chat with the local model' }).waitFor()
}

export async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text)
  await composer(page).press('Enter')
}

/** Waits until the chat is idle again and the last reply is complete. */
export async function settled(page: Page, reply?: string): Promise<void> {
  await expect.poll(() => transcript(page).getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false')
  if (reply !== undefined)
    await expect.poll(() => rowText(rows(page, 'assistant').last()), { timeout: 20_000 }).toBe(reply)
}

/** Sends `prompt` and waits for its whole reply: the known one, unless `reply` is null. */
export async function ask(
  page: Page,
  prompt: string,
  reply: string | null = expectedReply(prompt),
): Promise<void> {
  const before = await rows(page, 'assistant').count()
  await send(page, prompt)
  await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(before + 1)
  await settled(page, reply ?? undefined)
}

/**
 * The lengths the streaming reply's text went through, seen frame by frame in the page: start
 * it before sending, await it after.
 */
export const watchStream = (page: Page): Promise<number[]> =>
  page.evaluate(
    () =>
      new Promise<number[]>((resolve) => {
        const seen: number[] = []
        const tick = (): void => {
          const live = document.querySelector('li.message[data-role="assistant"][aria-busy="true"]')
          if (live) {
            const n = [...live.querySelectorAll('.bubble > [data-block="text"]')]
              .map((e) => e.textContent ?? '')
              .join('').length
            if (seen.at(-1) !== n) seen.push(n)
          }
          const busy = document.querySelector('[aria-label="Messages"]')?.getAttribute('aria-busy')
          if (seen.length > 0 && busy === 'false') resolve(seen)
          else requestAnimationFrame(tick)
        }
        tick()
      }),
  )

/** Resolves once a reply is streaming and has more than `chars` characters of text so far. */
export const midStream = async (page: Page, chars: number): Promise<void> => {
  await page.waitForFunction((n) => {
    const text = document.querySelector(
      'li.message[data-role="assistant"][aria-busy="true"] .bubble > [data-block="text"]',
    )
    return (text?.textContent?.length ?? 0) > n
  }, chars)
}

/**
 * Two tabs on one chat: A asks "Hello from tab A" and B opens A's chat with both messages; then A
 * sends "Tab A asks again" and B, without reloading, sees the reply stream in and settle.
 */
export async function twoTabs(open: (url?: string) => Promise<Page>): Promise<{ a: Page; b: Page }> {
  const a = await open()
  await ask(a, 'Hello from tab A')
  const b = await open(a.url())
  await expect.poll(() => rows(b).count()).toBe(2)

  // A writes: B sees the question, then the reply streaming in, without reloading.
  const seenByB = watchStream(b)
  await send(a, 'Tab A asks again')
  expect((await seenByB).length).toBeGreaterThan(5)
  await settled(b, expectedReply('Tab A asks again'))
  return { a, b }
}

/** The "2 / 3" picker of a message row. */
export const picker = (row: Locator): Locator => row.getByRole('group', { name: /^Version \d+ of \d+$/ })

/** Awaits what `watchStream` saw: the reply came token by token, more than ten lengths, each longer. */
export async function expectTokenByToken(stream: Promise<number[]>): Promise<void> {
  const lengths = await stream
  expect(lengths.length).toBeGreaterThan(10)
  for (let i = 1; i < lengths.length; i++) expect(lengths[i]).toBeGreaterThan(lengths[i - 1])
}

/** Edits the first question into `text` (a sibling branch) and waits for that branch's reply. */
export async function editFirstQuestion(page: Page, text: string): Promise<void> {
  // Where the row's actions show on hover only, hovering is what lets a user reach them.
  await rows(page, 'user').first().hover()
  await rows(page, 'user').first().getByRole('button', { name: 'Edit message' }).click()
  await page.getByRole('textbox', { name: 'Edit message' }).fill(text)
  await page.getByRole('button', { name: 'Save & send' }).click()
  await settled(page, expectedReply(text))
}

/**
 * Regenerates the first reply, to `prompt`: its picker reads `picked` at once (the new reply is
 * shown before it has text), then the second reply to `prompt` lands.
 */
export async function regenerateFirstReply(page: Page, prompt: string, picked: string): Promise<void> {
  await rows(page, 'assistant').first().getByRole('button', { name: 'Regenerate reply' }).click()
  await expect
    .poll(() =>
      picker(rows(page, 'assistant').first())
        .textContent()
        .catch(() => null),
    )
    .toBe(picked)
  await settled(page, expectedReply(prompt, 1))
}

/** After `twoTabs`: B starts a new chat, and A's sidebar lists it first, live. */
export async function newChatSeenByA(a: Page, b: Page): Promise<void> {
  await newChat(b)
  await ask(b, 'A new chat from B')
  await expect
    .poll(() => chats(a).locator('.session-title').allTextContents())
    .toEqual(['A new chat from B', 'Hello from tab A'])
}
