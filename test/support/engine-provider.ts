import { defineBrowserProvider } from '@vitest/browser'
import type { BrowserProvider, BrowserProviderOption, TestProject } from 'vitest/node'
import {
  launchEngine,
  type EngineBrowser,
  type EngineContext,
  type EnginePage,
  type EngineName,
} from './engines.js'

// Vitest browser mode in WebKit (WebKitGTK's MiniBrowser over WebKitWebDriver) and Gecko
// (firefox-esr over WebDriver BiDi), through the same driver the multi-page tests use.
// Vitest's own WebDriver provider needs webdriverio, which has no release for this Vitest and
// needs geckodriver (a download) for Firefox; the suites use no provider commands (no
// userEvent, locators or screenshots), so a provider only has to open Vitest's page.

class EngineProvider implements BrowserProvider {
  name = 'engines'
  supportsParallelism = false
  private browser?: Promise<EngineBrowser>
  private context?: Promise<EngineContext>
  private pages = new Map<string, EnginePage>()

  constructor(private readonly engine: EngineName) {}

  getCommandsContext(): Record<string, unknown> {
    return {}
  }

  async openPage(sessionId: string, url: string): Promise<void> {
    // 40 MiB per site: the quota test (device-storage.browser.test.ts) fills it in seconds.
    this.browser ??= launchEngine(this.engine, { siteQuotaMiB: 40 })
    const browser = await this.browser
    this.context ??= browser.newContext()
    const context = await this.context
    let page = this.pages.get(sessionId)
    if (!page) {
      page = await context.newPage()
      this.pages.set(sessionId, page)
    }
    await page.goto(url)
  }

  async close(): Promise<void> {
    const browser = this.browser
    this.browser = undefined
    this.context = undefined
    this.pages.clear()
    if (browser) await (await browser).close()
  }
}

export function engines(): BrowserProviderOption {
  return defineBrowserProvider({
    name: 'engines',
    supportedBrowser: ['webkit', 'firefox'],
    options: {},
    providerFactory: (project: TestProject) => new EngineProvider(project.config.browser.name as EngineName),
  })
}
