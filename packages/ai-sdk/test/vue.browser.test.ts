import { mount } from '@vue/test-utils'
import { defineComponent, h } from 'vue'
import { describe, expect, it, vi } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { createThread } from '@colloquy/parts'
import { ColloquyChat } from '../src/index.js'
import { useColloquyChat, type ColloquyChatRefs } from '../src/vue.js'
import { gate, tabs, until } from '../../../test/support/streaming.js'
import { tokenTransport } from './transport.js'

const textOf = (m: { parts: { type: string; text?: string }[] }): string =>
  m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')

describe('useColloquyChat (Vue)', () => {
  it('renders the session live: send, stream, edit as a sibling, regenerate, and stops listening on unmount', async () => {
    const db = tabs('aisdk-vue')
    const store = await db.open()
    const sid = await createThread(store)
    const hold = gate()
    let n = 0
    const chat = new ColloquyChat({
      store,
      session_id: sid,
      transport: tokenTransport(4, { hold, holdAt: 2, prefix: () => `v${n++}_` }),
    })
    await chat.ready
    let refs!: ColloquyChatRefs<never>
    const wrapper = mount(
      defineComponent({
        setup() {
          refs = useColloquyChat(chat as never)
          return () =>
            h(
              'ul',
              refs.messages.value.map((m) =>
                h('li', { 'data-role': (m as { role: string }).role }, textOf(m)),
              ),
            )
        },
      }),
    )
    const send = chat.sendMessage({ text: 'hello vue' })
    await until(() => refs.status.value === 'streaming' && wrapper.findAll('li').length === 2)
    await wrapper.vm.$nextTick()
    expect(wrapper.findAll('li').map((li) => li.text())).toEqual(['hello vue', 'v0_0 v0_1'])
    hold.open()
    await send
    await chat.flush()
    await until(() => refs.status.value === 'ready')
    await wrapper.vm.$nextTick()
    expect(wrapper.findAll('li').map((li) => li.text())).toEqual(['hello vue', 'v0_0 v0_1 v0_2 v0_3'])

    const first = refs.messages.value[0] as { id: string }
    await chat.sendMessage({ text: 'hello again', messageId: first.id })
    await chat.regenerate()
    await chat.flush()
    await wrapper.vm.$nextTick()
    expect(wrapper.findAll('li').map((li) => li.text())).toEqual(['hello again', 'v2_0 v2_1 v2_2 v2_3'])
    const tree = (await firstValueFrom(store.tree$(sid)))!
    const edited = (refs.messages.value[0] as { id: string }).id
    expect(tree.children.get(tree.entries.get(first.id)!.parent_id)).toEqual([first.id, edited])
    expect(tree.children.get(edited)).toHaveLength(2)

    wrapper.unmount()
    const before = refs.messages.value
    await store.setActiveLeaf({ session_id: sid, entry_id: tree.children.get(first.id)![0] })
    // The chat follows the leaf; the unmounted view, which the same change would have reached by now, does not.
    await vi.waitFor(() => expect(chat.messages.map(textOf)).toEqual(['hello vue', 'v0_0 v0_1 v0_2 v0_3']))
    expect(refs.messages.value).toBe(before)
    chat.close()
    await store.close()
    db.drop()
  })
})
