import './act-environment.js'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { useAttachments, useAttachmentUrl, useDraft, useMentions } from '../src/index.js'
import { memoryStore } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

describe('draft, attachment and mention hooks', () => {
  it('useDraft shows typing at once, saves after a pause, and restores the stored draft', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    await store.setDraft({ session_id, draft: 'restored' })
    const { result, unmount } = renderHook(() => useDraft(session_id, { delay: 30 }), {
      wrapper: providerOf(store),
    })
    expect(result.current.text).toBe('restored')
    act(() => result.current.setText('half-typ'))
    act(() => result.current.setText('half-typed'))
    expect(result.current.text).toBe('half-typed')
    // Not saved yet: the pause has not passed.
    expect((await store.get({ session_id }))!.meta.draft).toBe('restored')
    await waitFor(async () => expect((await store.get({ session_id }))!.meta.draft).toBe('half-typed'))
    // Typing pending at unmount is saved.
    act(() => result.current.setText('last words'))
    unmount()
    await waitFor(async () => expect((await store.get({ session_id }))!.meta.draft).toBe('last words'))
  })

  it('useDraft follows a save made elsewhere (another tab) unless typing is pending, and parks chips', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const { result } = renderHook(() => useDraft(session_id, { delay: 20 }), { wrapper: providerOf(store) })
    await act(() => store.setDraft({ session_id, draft: 'from the other tab' }))
    expect(result.current.text).toBe('from the other tab')
    const { attachment } = await store.putAttachment({
      session_id,
      name: 'a.png',
      mime: 'image/png',
      data: 'iVBORw0KGgo=',
    })
    await act(() => result.current.setAttachments([attachment.attachment_id]))
    expect(result.current.attachments.map((a) => a.name)).toStrictEqual(['a.png'])
    expect((await store.get({ session_id }))!.meta.draft).toBe('from the other tab')
    act(() => result.current.setText('mine'))
    await act(() =>
      store.setDraft({ session_id, draft: 'theirs', attachment_ids: [attachment.attachment_id] }),
    )
    expect(result.current.text).toBe('mine')
    await waitFor(async () =>
      expect((await store.get({ session_id }))!.meta).toMatchObject({
        draft: 'mine',
        draft_attachments: [{ name: 'a.png' }],
      }),
    )
    await act(() => result.current.clear())
    expect(result.current.text).toBe('')
    expect(result.current.attachments).toStrictEqual([])
    const meta = (await store.get({ session_id }))!.meta
    expect('draft' in meta || 'draft_attachments' in meta).toBe(false)
  })

  it('useDraft reports a failed save to the onError of the latest render, keeping its saver and pending typing', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const seen: string[] = []
    // An inline handler, as callers write it: a new function on every render.
    const { result, rerender } = renderHook(
      ({ label }: { label: string }) =>
        useDraft(session_id, { delay: 10_000, onError: () => seen.push(label) }),
      {
        initialProps: { label: 'first' },
        wrapper: providerOf(store),
      },
    )
    act(() => result.current.setText('typed'))
    rerender({ label: 'second' })
    // The same saver: the typing it holds is still shown, and still saved on flush.
    expect(result.current.text).toBe('typed')
    await act(() => result.current.flush())
    expect((await store.get({ session_id }))!.meta.draft).toBe('typed')
    // A chip that does not exist: the save fails, and the handler of the latest render hears it.
    await act(() => result.current.setAttachments(['no-such-attachment']))
    expect(seen).toStrictEqual(['second'])
  })

  it('useAttachments lists live; useAttachmentUrl gives an object URL that is released on unmount', async () => {
    const store = await memoryStore()
    const { session_id } = await store.create({})
    const list = renderHook(() => useAttachments(session_id), { wrapper: providerOf(store) })
    expect(list.result.current.data).toStrictEqual([])
    const { attachment } = await act(() =>
      store.putAttachment({ session_id, file: new File(['hello'], 'a.txt', { type: 'text/plain' }) }),
    )
    expect(list.result.current.data!.map((a) => a.attachment_id)).toStrictEqual([attachment.attachment_id])
    const url = renderHook(() => useAttachmentUrl(session_id, attachment.attachment_id), {
      wrapper: providerOf(store),
    })
    await waitFor(() => expect(url.result.current).toMatch(/^blob:/))
    const href = url.result.current!
    expect(await (await fetch(href)).text()).toBe('hello')
    url.unmount()
    await waitFor(() => expect(fetch(href)).rejects.toThrow())
    const missing = renderHook(() => useAttachmentUrl(session_id, 'a_404'), { wrapper: providerOf(store) })
    await waitFor(() => expect(missing.result.current).toBeNull())
  })

  it('useMentions ranks sessions for an "@" picker and follows renames', async () => {
    const store = await memoryStore()
    const a = await store.create({ title: 'Deploy notes' })
    await store.create({ title: 'Groceries' })
    const { result, rerender } = renderHook(({ q }) => useMentions(q), {
      wrapper: providerOf(store),
      initialProps: { q: 'dep' },
    })
    await waitFor(() => expect(result.current.data?.map((i) => i.label)).toStrictEqual(['Deploy notes']))
    await act(() => store.setMeta({ session_id: a.session_id, title: 'Release notes' }))
    await waitFor(() => expect(result.current.data).toStrictEqual([]))
    rerender({ q: 'gro' })
    await waitFor(() => expect(result.current.data?.map((i) => i.label)).toStrictEqual(['Groceries']))
  })
})
