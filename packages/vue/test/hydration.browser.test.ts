import { createSSRApp, defineComponent, h, nextTick } from 'vue'
import { describe, expect, it } from 'vitest'
import { createColloquy, useMessages } from '../src/index.js'
import { memoryStore, seedSession } from '../../../test/support/fixtures.js'

describe('hydration', () => {
  it('hydrates the loading markup the server rendered without a mismatch, then shows live data', async () => {
    const store = await memoryStore()
    const { session_id } = await seedSession(store, 3)
    const Count = defineComponent({
      setup() {
        const messages = useMessages({ session_id })
        return () =>
          h('p', messages.value.status === 'ready' ? `${messages.value.data.length} messages` : 'loading')
      },
    })
    const container = document.createElement('div')
    // What renderToString gives for this component (see ssr.test.ts: composables render loading).
    container.innerHTML = '<p>loading</p>'
    const warnings: string[] = []
    const app = createSSRApp(Count).use(createColloquy({ store }))
    app.config.warnHandler = (msg) => void warnings.push(msg)
    app.mount(container)
    expect(warnings.filter((w) => /hydration/i.test(w))).toEqual([])
    await nextTick()
    expect(container.textContent).toBe('3 messages')
    app.unmount()
  })
})
