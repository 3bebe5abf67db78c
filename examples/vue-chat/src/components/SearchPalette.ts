import type { Search, SearchHit, SearchResult } from '@colloquy/core/search'
import { useSearch, useSession, useStore } from '@colloquy/vue'
import { groupByChat, ROLE_LABEL, SEARCH_LIMIT, searchOf, searchStatus, snippetParts } from 'chat-kit/search'
import 'chat-kit/search.css'
import {
  computed,
  defineComponent,
  h,
  nextTick,
  onMounted,
  shallowRef,
  useId,
  watch,
  type PropType,
} from 'vue'

/** The snippet's text with its matched words marked; as text nodes only, never as markup. */
const snippet = (s: SearchHit['snippet']): ReturnType<typeof h> =>
  h(
    'span',
    { class: 'search-snippet' },
    snippetParts(s).map((part) => (part.marked ? h('mark', { key: part.at }, part.text) : part.text)),
  )

const ChatTitle = defineComponent({
  props: { sessionId: { type: String, required: true } },
  setup(props) {
    const session = useSession(() => props.sessionId)
    return () => (session.value.status === 'ready' && session.value.data?.title) || 'Untitled chat'
  },
})

/**
 * Ctrl/Cmd+K: every message of every chat, searched on the device as you type (the same palette
 * as the React demo's, from chat-kit's rules). Loaded on the first Ctrl/Cmd+K with the search
 * entry, so the app's start bundle carries none of it.
 */
export const SearchPalette = defineComponent({
  props: {
    /** A hit was chosen (Enter or a click): open its chat at its message. */
    onPick: { type: Function as PropType<(hit: SearchHit) => void>, required: true },
    onClose: { type: Function as PropType<() => void>, required: true },
  },
  setup(props) {
    const store = useStore()
    const search = shallowRef<Search | null>(null)
    const failed = shallowRef<string | null>(null)
    watch(
      store,
      (s, _, onCleanup) => {
        if (!s) return
        let live = true
        onCleanup(() => void (live = false))
        searchOf(s).then(
          (handle) => void (live && (search.value = handle)),
          (e: unknown) => void (live && (failed.value = e instanceof Error ? e.message : String(e))),
        )
      },
      { immediate: true },
    )

    const query = shallowRef('')
    const active = shallowRef(0)
    const state = useSearch(search, query, { limit: SEARCH_LIMIT })
    // While the next answer is on its way, the last one stays: no flicker between keystrokes.
    const shown = shallowRef<SearchResult | null>(null)
    watch(state, (s) => void (s.status === 'ready' && (shown.value = s.data)), { immediate: true })

    const typed = computed(() => query.value.trim() !== '')
    // Grouped by chat, the chats in the order of their best hit; `flat` is the keyboard's order.
    const groups = computed(() => groupByChat(typed.value && shown.value ? shown.value.hits : []))
    const flat = computed(() => groups.value.flatMap(([, group]) => group))
    const current = computed(() => Math.min(active.value, flat.value.length - 1))

    const listId = useId()
    const optionId = (i: number): string => `${listId}-${i}`
    watch(current, (i) => {
      if (i >= 0)
        void nextTick(() => document.getElementById(optionId(i))?.scrollIntoView({ block: 'nearest' }))
    })

    const input = shallowRef<HTMLInputElement | null>(null)
    onMounted(() => input.value?.focus())

    const onKeydown = (e: KeyboardEvent): void => {
      const n = flat.value.length
      if (e.key === 'Escape') props.onClose()
      else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault()
        if (n > 0) active.value = (current.value + (e.key === 'ArrowDown' ? 1 : n - 1)) % n
      } else if (e.key === 'Enter' && current.value >= 0) {
        e.preventDefault()
        props.onPick(flat.value[current.value])
      }
    }

    return () => {
      const s = state.value
      const status = searchStatus({
        failed: failed.value,
        ready: search.value !== null,
        error: s.status === 'error' ? s.error : undefined,
        typed: typed.value,
        answered: shown.value !== null && s.status === 'ready',
        hits: flat.value.length,
        incomplete: shown.value?.incomplete ?? false,
      })
      let index = 0
      return h(
        'div',
        {
          class: 'overlay search-overlay',
          onMousedown: (e: MouseEvent) => e.target === e.currentTarget && props.onClose(),
        },
        [
          h(
            'div',
            {
              role: 'dialog',
              'aria-modal': 'true',
              'aria-label': 'Search chats',
              class: 'dialog search-palette',
            },
            [
              h('input', {
                ref: input,
                type: 'search',
                role: 'combobox',
                'aria-label': 'Search chats',
                'aria-expanded': String(flat.value.length > 0),
                'aria-controls': listId,
                'aria-autocomplete': 'list',
                'aria-activedescendant': current.value >= 0 ? optionId(current.value) : undefined,
                placeholder: 'Search every chat…',
                value: query.value,
                onInput: (e: Event) => {
                  query.value = (e.target as HTMLInputElement).value
                  active.value = 0
                },
                onKeydown,
              }),
              status && h('p', { class: 'search-status muted', role: 'status' }, status),
              h(
                'div',
                { id: listId, role: 'listbox', 'aria-label': 'Matches', class: 'search-results' },
                groups.value.map(([sessionId, group]) =>
                  h(
                    'div',
                    {
                      key: sessionId,
                      role: 'group',
                      'aria-labelledby': `${listId}-${sessionId}`,
                      class: 'search-group',
                    },
                    [
                      h('div', { id: `${listId}-${sessionId}`, class: 'search-chat', role: 'presentation' }, [
                        h(ChatTitle, { sessionId }),
                      ]),
                      ...group.map((hit) => {
                        const i = index++
                        return h(
                          'div',
                          {
                            key: hit.entry_id ?? 'title',
                            id: optionId(i),
                            role: 'option',
                            'aria-selected': String(i === current.value),
                            class: 'search-hit',
                            'data-entry-id': hit.entry_id ?? undefined,
                            // Keeps the focus in the input, so typing goes on after a click.
                            onMousedown: (e: MouseEvent) => e.preventDefault(),
                            onMousemove: () => i !== current.value && (active.value = i),
                            onClick: () => props.onPick(hit),
                          },
                          [
                            h('span', { class: 'search-role' }, ROLE_LABEL[hit.role]),
                            snippet(hit.snippet),
                            !hit.on_active_path && h('span', { class: 'search-branch' }, 'other branch'),
                          ],
                        )
                      }),
                    ],
                  ),
                ),
              ),
              h('p', { class: 'search-keys muted small' }, '↑↓ to move · Enter to open · Esc to close'),
            ],
          ),
        ],
      )
    }
  },
})
