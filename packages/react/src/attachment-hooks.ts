import type { AttachmentMeta, DraftState, MentionItem, MentionSearchRequest } from '@colloquy/core'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import {
  DraftSaver,
  shownDraftText,
  type LiveState,
  attachmentsQuery,
  draftQuery,
  mentionsQuery,
} from '@colloquy/kit'
import { useStore } from './provider.js'
import { useLive } from './use-live.js'

export interface DraftOptions {
  /** Pause after the last keystroke before the text is saved, ms (default 400). */
  delay?: number
  onError?: (error: unknown) => void
}

/** What `useDraft` returns: the composer's text and chips, kept in the session's draft. */
export interface DraftBinding {
  /** The stored draft, live across tabs (`data: null` when the session does not exist). */
  readonly state: LiveState<DraftState | null>
  /** What the text box shows: the stored text until the user types, then what they typed. */
  readonly text: string
  /** Typing: shown at once, saved after a pause. */
  setText(text: string): void
  /** The parked chips. */
  readonly attachments: readonly AttachmentMeta[]
  /** Parks exactly these attachments (saved at once, with the current text). */
  setAttachments(attachment_ids: readonly string[]): Promise<void>
  /** Saves typed text now. */
  flush(): Promise<void>
  /** Clears text and chips (after sending). */
  clear(): Promise<void>
}

const NONE: readonly AttachmentMeta[] = Object.freeze([])

/**
 * The composer's draft: restored after a reload, saved while typing (debounced), live across
 * tabs (another tab's save shows here unless this one has unsaved typing). Pending typing is
 * saved when the component unmounts or the page is hidden.
 */
export function useDraft(session_id: string, options: DraftOptions = {}): DraftBinding {
  const store = useStore()
  const state = useLive(store && draftQuery(store, session_id))
  // The saver outlives renders (it holds pending typing), while callers pass `onError` inline,
  // a new function each render: it calls the latest one through a ref instead of being made
  // again for it.
  const onError = useRef(options.onError)
  useEffect(() => {
    onError.current = options.onError
  })
  const saver = useMemo(
    () => store && new DraftSaver(store, session_id, options.delay, (e) => onError.current?.(e)),
    [store, session_id, options.delay],
  )
  const stored = state.data?.draft ?? ''
  const [typed, setTyped] = useState<{ saver: DraftSaver | null; text: string } | undefined>(undefined)
  // Typing belongs to one session's saver; a stored change from elsewhere wins unless typing is pending.
  const own = typed && typed.saver === saver ? typed : undefined
  const text = shownDraftText(own?.text, stored, saver)

  useEffect(() => {
    if (!saver) return
    const hide = (): void => void saver.flush()
    if (typeof document !== 'undefined') document.addEventListener('visibilitychange', hide)
    return () => {
      if (typeof document !== 'undefined') document.removeEventListener('visibilitychange', hide)
      void saver.flush()
    }
  }, [saver])

  const setText = useCallback(
    (next: string) => {
      setTyped({ saver, text: next })
      saver?.setText(next)
    },
    [saver],
  )
  const attachments = state.data?.attachments ?? NONE
  return {
    state,
    text,
    setText,
    attachments,
    setAttachments: useCallback(
      (ids: readonly string[]) => saver?.setAttachments(ids, text) ?? Promise.resolve(),
      [saver, text],
    ),
    flush: useCallback(() => saver?.flush() ?? Promise.resolve(), [saver]),
    clear: useCallback(() => {
      setTyped({ saver, text: '' })
      return saver?.clear() ?? Promise.resolve()
    }, [saver]),
  }
}

/** The session's attachments (metadata only), live; `data: null` when the session does not exist. */
export function useAttachments(session_id: string): LiveState<readonly AttachmentMeta[] | null> {
  const store = useStore()
  return useLive(store && attachmentsQuery(store, session_id))
}

/**
 * An object URL for an attachment (an `<img src>`), read on demand: `undefined` while loading,
 * `null` when there is no such attachment. The URL lives as long as a component holds it.
 */
export function useAttachmentUrl(
  session_id: string | null | undefined,
  attachment_id: string | null | undefined,
): string | null | undefined {
  const store = useStore()
  const [url, setUrl] = useState<{ key: string; url: string | null } | undefined>(undefined)
  const key = `${session_id}\u0000${attachment_id}`
  useEffect(() => {
    if (!store || !session_id || !attachment_id) return
    let live = true
    store.attachmentUrl(session_id, attachment_id).then(
      (u) => live && setUrl({ key, url: u }),
      () => live && setUrl({ key, url: null }),
    )
    return () => {
      live = false
      store.releaseAttachmentUrl(session_id, attachment_id)
    }
  }, [store, session_id, attachment_id, key])
  if (!session_id || !attachment_id) return null
  return url?.key === key ? url.url : undefined
}

/** Sessions to offer for an "@" mention, ranked as the mention provider does, live. */
export function useMentions(
  query: string,
  options: Omit<MentionSearchRequest, 'query'> = {},
): LiveState<MentionItem[]> {
  const store = useStore()
  return useLive(store && mentionsQuery(store, { ...options, query }))
}
