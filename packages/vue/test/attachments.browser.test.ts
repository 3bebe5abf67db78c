import { nextTick, ref } from 'vue'
import { describe, expect, it, vi } from 'vitest'
import { useAttachments, useAttachmentUrl, useDraft, useMentions } from '../src/index.js'
import { memoryStore } from '../../../test/support/fixtures.js'
import { withSetup } from './with-setup.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const until = async (check: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await sleep(5)
  }
}

describe('draft, attachment and mention composables', () => {
  it('useDraft: v-model text restored, saved after a pause, saved on unmount, follows other tabs, parks chips', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    await store.setDraft({ session_id, draft: 'restored' })
    const { result, wrapper } = withSetup(() => useDraft(session_id, { delay: 20 }), store)
    expect(result.text.value).toBe('restored')
    result.text.value = 'typing'
    expect(result.text.value).toBe('typing')
    expect((await store.get({ session_id }))!.meta.draft).toBe('restored')
    await vi.waitFor(async () => expect((await store.get({ session_id }))!.meta.draft).toBe('typing'))
    await store.setDraft({ session_id, draft: 'other tab' })
    expect(result.text.value).toBe('other tab')
    const { attachment } = await store.putAttachment({ session_id, name: 'c.txt', data: 'aGk=' })
    await result.setAttachments([attachment.attachment_id])
    expect(result.attachments.value.map((a) => a.name)).toStrictEqual(['c.txt'])
    result.text.value = 'unsaved'
    wrapper.unmount()
    await vi.waitFor(async () =>
      expect((await store.get({ session_id }))!.meta).toMatchObject({
        draft: 'unsaved',
        draft_attachments: [{ name: 'c.txt' }],
      }),
    )
  })

  it('useAttachments and useAttachmentUrl follow the ids and release the URL', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const { attachment } = await store.putAttachment({
      session_id,
      file: new File(['hello'], 'a.txt', { type: 'text/plain' }),
    })
    const id = ref<string | null>(attachment.attachment_id)
    const { result, wrapper } = withSetup(
      () => ({ list: useAttachments(session_id), url: useAttachmentUrl(session_id, id) }),
      store,
    )
    expect(result.list.value.data!.map((a) => a.name)).toStrictEqual(['a.txt'])
    await until(() => typeof result.url.value === 'string')
    const href = result.url.value!
    expect(await (await fetch(href)).text()).toBe('hello')
    id.value = null
    await nextTick()
    expect(result.url.value).toBeNull()
    await vi.waitFor(() => expect(fetch(href)).rejects.toThrow())
    wrapper.unmount()
  })

  it('useMentions follows the query and session changes', async () => {
    const store = await memoryStore()
    await store.create({ title: 'Deploy notes' })
    const q = ref('dep')
    const { result } = withSetup(() => useMentions(q), store)
    await until(() => result.value.data?.[0]?.label === 'Deploy notes')
    q.value = 'new'
    await store.create({ title: 'New idea' })
    await until(() => result.value.data?.length === 1 && result.value.data[0].label === 'New idea')
  })
})
