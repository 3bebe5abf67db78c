import type { Store } from '@colloquy/core'
import { mount } from '@vue/test-utils'
import { defineComponent, h, nextTick } from 'vue'
import { describe, expect, it } from 'vitest'
import { createColloquy, useEntry, useMessageIds } from '../src/index.js'
import { countSubscriptions, memoryStore, seedSession, textOf } from '../../../test/support/fixtures.js'

const UPDATES = 200

/** A list reading ids and rows reading their own entry, with a render counter for each. */
function chatView(session_id: string) {
  const rowRenders = new Map<string, number>()
  const counts = { list: 0 }
  const Row = defineComponent({
    props: { entry_id: { type: String, required: true } },
    setup(props) {
      const entry = useEntry(session_id, () => props.entry_id)
      return () => {
        rowRenders.set(props.entry_id, (rowRenders.get(props.entry_id) ?? 0) + 1)
        return h('p', { 'data-id': props.entry_id }, textOf(entry.value.data))
      }
    },
  })
  const List = defineComponent({
    setup() {
      const ids = useMessageIds({ session_id })
      return () => {
        counts.list++
        return h(
          'div',
          ids.value.data?.map((id) => h(Row, { key: id, entry_id: id })),
        )
      }
    },
  })
  return { List, rowRenders, counts }
}

const mountWith = (component: ReturnType<typeof defineComponent>, store: Store) =>
  mount(component, { global: { plugins: [createColloquy({ store })] } })

describe('re-render granularity', () => {
  it('streaming 200 updates into one message re-renders that row only', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 20)
    const last = ids.at(-1)!
    const { List, rowRenders, counts } = chatView(session_id)
    const wrapper = mountWith(List, store)
    expect(wrapper.find(`[data-id="${last}"]`).text()).toBe('a19')
    const rowsAtMount = new Map(rowRenders)
    const listAtMount = counts.list
    const subs = countSubscriptions(store)

    let text = ''
    for (let i = 0; i < UPDATES; i++) {
      text += `t${i} `
      await store.updateMessage({ session_id, entry_id: last, content: [{ type: 'text', text }] })
      await nextTick()
      expect(wrapper.find(`[data-id="${last}"]`).text()).toBe(text.trim())
    }

    expect(rowRenders.get(last)! - rowsAtMount.get(last)!).toBe(UPDATES)
    for (const id of ids.slice(0, -1)) expect(rowRenders.get(id)).toBe(rowsAtMount.get(id))
    expect(counts.list).toBe(listAtMount)
    // The rows' live queries stay open and core routes each update to its entry: nothing reopens.
    expect(subs.opened()).toBe(0)
  })

  it('an append re-renders the list, and the new row renders once', async () => {
    const store = await memoryStore()
    const { session_id, ids } = await seedSession(store, 5)
    const { List, rowRenders, counts } = chatView(session_id)
    const wrapper = mountWith(List, store)
    const listAtMount = counts.list
    const { entry_id } = await store.append({
      session_id,
      message: { role: 'user', content: [{ type: 'text', text: 'new' }], timestamp: 1 },
    })
    await nextTick()
    expect(wrapper.findAll('p').map((p) => p.attributes('data-id'))).toEqual([...ids, entry_id])
    expect(counts.list).toBe(listAtMount + 1)
    expect(rowRenders.get(entry_id)).toBe(1)
    // Existing rows' props did not change: Vue skips them.
    for (const id of ids) expect(rowRenders.get(id)).toBe(1)
  })
})
