import type { AttachmentMeta, DraftState, MentionItem, MentionSearchRequest } from '@colloquy/core'
import {
  computed,
  getCurrentScope,
  onScopeDispose,
  readonly,
  ref,
  shallowRef,
  toValue,
  watch,
  type ComputedRef,
  type MaybeRefOrGetter,
  type Ref,
  type WritableComputedRef,
} from 'vue'
import { DraftSaver, shownDraftText, attachmentsQuery, draftQuery, mentionsQuery } from '@colloquy/kit'
import { useStore } from './plugin.js'
import { useLive, type LiveRef } from './use-live.js'

export interface DraftOptions {
  /** Pause after the last keystroke before the text is saved, ms (default 400). */
  delay?: number
  onError?: (error: unknown) => void
}

/** What `useDraft` returns: bind `text` with `v-model`; chips are `attachments`. */
export interface DraftBinding {
  /** The stored draft, live across tabs (`data: null` when the session does not exist). */
  readonly state: LiveRef<DraftState | null>
  /** The composer's text: the stored text until the user types; writing it saves after a pause. */
  readonly text: WritableComputedRef<string>
  readonly attachments: ComputedRef<readonly AttachmentMeta[]>
  /** Parks exactly these attachments (saved at once, with the current text). */
  setAttachments(attachment_ids: readonly string[]): Promise<void>
  flush(): Promise<void>
  /** Clears text and chips (after sending). */
  clear(): Promise<void>
}

const NONE: readonly AttachmentMeta[] = Object.freeze([])

/**
 * The composer's draft: restored after a reload, saved while typing (debounced), live across
 * tabs (another tab's save shows here unless this one has unsaved typing). Pending typing is
 * saved when the scope ends, the session changes or the page is hidden.
 */
export function useDraft(session_id: MaybeRefOrGetter<string>, options: DraftOptions = {}): DraftBinding {
  const store = useStore()
  const state = useLive(() => store.value && draftQuery(store.value, toValue(session_id)))
  const saver = shallowRef<DraftSaver | null>(null)
  const typed = ref<string | undefined>(undefined)
  // Bumped when a save settles: `busy` is not reactive, the text must be derived again then.
  const settled = ref(0)
  watch(
    () => [store.value, toValue(session_id)] as const,
    ([s, id]) => {
      void saver.value?.flush()
      typed.value = undefined
      saver.value = s
        ? new DraftSaver(s, id, options.delay, options.onError, () => void settled.value++)
        : null
    },
    { immediate: true },
  )
  const hide = (): void => void saver.value?.flush()
  if (typeof document !== 'undefined') document.addEventListener('visibilitychange', hide)
  if (getCurrentScope()) {
    onScopeDispose(() => {
      if (typeof document !== 'undefined') document.removeEventListener('visibilitychange', hide)
      void saver.value?.flush()
    })
  }
  const stored = computed(() => state.value.data?.draft ?? '')
  const text = computed({
    get: () => (settled.value, shownDraftText(typed.value, stored.value, saver.value)),
    set(next: string) {
      typed.value = next
      saver.value?.setText(next)
    },
  })
  return {
    state,
    text,
    attachments: computed(() => state.value.data?.attachments ?? NONE),
    setAttachments: (ids) => saver.value?.setAttachments(ids, text.value) ?? Promise.resolve(),
    flush: () => saver.value?.flush() ?? Promise.resolve(),
    clear: () => {
      typed.value = ''
      return saver.value?.clear() ?? Promise.resolve()
    },
  }
}

/** The session's attachments (metadata only), live; `data: null` when the session does not exist. */
export function useAttachments(
  session_id: MaybeRefOrGetter<string>,
): LiveRef<readonly AttachmentMeta[] | null> {
  const store = useStore()
  return useLive(() => store.value && attachmentsQuery(store.value, toValue(session_id)))
}

/**
 * An object URL for an attachment (an `<img :src>`), read on demand: `undefined` while loading,
 * `null` when there is no such attachment. Released when the ids change or the scope ends.
 */
export function useAttachmentUrl(
  session_id: MaybeRefOrGetter<string | null | undefined>,
  attachment_id: MaybeRefOrGetter<string | null | undefined>,
): Readonly<Ref<string | null | undefined>> {
  const store = useStore()
  const url = ref<string | null | undefined>(undefined)
  let release: (() => void) | undefined
  const stop = watch(
    () => [store.value, toValue(session_id), toValue(attachment_id)] as const,
    ([s, sid, aid]) => {
      release?.()
      release = undefined
      if (!s || !sid || !aid) {
        url.value = sid && aid ? undefined : null
        return
      }
      url.value = undefined
      let live = true
      s.attachmentUrl(sid, aid).then(
        (u) => live && (url.value = u),
        () => live && (url.value = null),
      )
      release = () => {
        live = false
        s.releaseAttachmentUrl(sid, aid)
      }
    },
    { immediate: true },
  )
  if (getCurrentScope()) {
    onScopeDispose(() => {
      stop()
      release?.()
    })
  }
  return readonly(url)
}

/** Sessions to offer for an "@" mention, ranked as the mention provider does, live. */
export function useMentions(
  query: MaybeRefOrGetter<string>,
  options: MaybeRefOrGetter<Omit<MentionSearchRequest, 'query'>> = {},
): LiveRef<MentionItem[]> {
  const store = useStore()
  return useLive(
    () =>
      store.value &&
      mentionsQuery(
        store.value,
        JSON.parse(JSON.stringify({ ...toValue(options), query: toValue(query) })) as MentionSearchRequest,
      ),
  )
}
