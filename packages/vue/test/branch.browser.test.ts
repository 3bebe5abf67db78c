import { mount } from '@vue/test-utils'
import { defineComponent, h, ref } from 'vue'
import { describe, expect, it, vi } from 'vitest'
import { createColloquy, useBranch, useMessageIds } from '../src/index.js'
import { branchedSession, countSubscriptions, memoryStore, user } from '../../../test/support/fixtures.js'
import { withSetup } from './with-setup.js'

describe('useBranch', () => {
  it('reports index and count; prev/next/select move the active leaf to the newest leaf under the sibling', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const { result } = withSetup(
      () => ({
        a1: useBranch(t.session_id, t.a1),
        a1b: useBranch(t.session_id, t.a1b),
        path: useMessageIds({ session_id: t.session_id }),
      }),
      store,
    )
    expect(result.path.value.data).toEqual([t.q0, t.a1b, t.q2b, t.a3b])
    expect(result.a1b.value.data).toMatchObject({ index: 1, count: 2, siblings: [t.a1, t.a1b] })
    expect(result.a1.value.data).toMatchObject({ index: 0, count: 2 })

    await result.a1b.value.data!.prev()
    expect(result.path.value.data).toEqual([t.q0, t.a1, t.q2x])
    await result.a1.value.data!.next()
    expect(result.path.value.data).toEqual([t.q0, t.a1b, t.q2b, t.a3b])
    await result.a1b.value.data!.select(0)
    expect(result.path.value.data).toEqual([t.q0, t.a1, t.q2x])
    await expect(result.a1b.value.data!.select(5)).rejects.toThrow(RangeError)
  })

  it('follows a changed entry argument and keeps its object while only content changes', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const entry = ref(t.q0)
    const { result } = withSetup(() => useBranch(t.session_id, entry), store)
    expect(result.value.data).toMatchObject({ index: 0, count: 1 })
    entry.value = t.q2
    expect(result.value.data).toMatchObject({ index: 0, count: 2 })
    const before = result.value
    await store.updateMessage({
      session_id: t.session_id,
      entry_id: t.a3b,
      content: [{ type: 'text', text: 'edited' }],
    })
    expect(result.value).toBe(before)
    await store.append({ session_id: t.session_id, parent_id: t.a1, message: user('q2y') })
    expect(result.value.data).toMatchObject({ index: 0, count: 3 })
  })

  it('a rendered picker switches the transcript on click', async () => {
    const store = await memoryStore()
    const t = await branchedSession(store)
    const subs = countSubscriptions(store)
    const Picker = defineComponent({
      props: { entry_id: { type: String, required: true } },
      setup(props) {
        const branch = useBranch(t.session_id, () => props.entry_id)
        return () => {
          const b = branch.value.data
          return b && b.count > 1
            ? h('span', [
                h('button', { class: 'prev', onClick: () => b.prev() }, '<'),
                `${b.index + 1} / ${b.count}`,
              ])
            : null
        }
      },
    })
    const Chat = defineComponent({
      setup() {
        const ids = useMessageIds({ session_id: t.session_id })
        return () =>
          h(
            'div',
            ids.value.data?.map((id) =>
              h('p', { key: id, 'data-id': id }, [id, h(Picker, { entry_id: id })]),
            ),
          )
      },
    })
    const wrapper = mount(Chat, { global: { plugins: [createColloquy({ store })] } })
    expect(wrapper.find(`[data-id="${t.a1b}"]`).text()).toContain('2 / 2')
    await wrapper.find(`[data-id="${t.a1b}"] .prev`).trigger('click')
    await vi.waitFor(() =>
      expect(wrapper.findAll('p').map((p) => p.attributes('data-id'))).toEqual([t.q0, t.a1, t.q2x]),
    )
    expect(wrapper.find(`[data-id="${t.a1}"]`).text()).toContain('1 / 2')
    wrapper.unmount()
    expect(subs.open()).toBe(0)
  })
})
