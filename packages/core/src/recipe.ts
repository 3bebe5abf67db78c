import { produce, type Draft as Mutable } from 'immer'
import { invalid, SessionError } from './model/errors.js'
import type { ContentBlock, UpdateMessageRequest, UpdateMessageResponse } from './model/model.js'
import { updateMessage as updateMessageOp } from './ops/entries.js'
import type { Store } from './store.js'
import { coreRequests } from './validation/requests.js'
import { parseWith } from './validation/record-parsers.js'

const parseUpdate = (request: unknown): UpdateMessageRequest =>
  parseWith(coreRequests['session::update-message'], request) as UpdateMessageRequest

// `@colloquy/core/recipe`: its own entry point, so an app that never imports it does not bundle
// immer.

/**
 * Changes a message's content in place, immer style: mutate the draft (`draft[0].text += token`)
 * or return new content. Blocks the recipe does not touch stay the same objects.
 */
export type ContentRecipe = (draft: Mutable<ContentBlock[]>) => ContentBlock[] | void

/** `session::update-message` without `content`: the recipe makes it. */
export type RecipeUpdateRequest = Omit<UpdateMessageRequest, 'content'>

/**
 * `store.updateMessage` with the content made by `recipe` from the message's current content.
 *
 * The recipe runs in the store's commit, in issue order with every other call, on the content as
 * it stands after the calls issued before it: a stream may fire one update per token without
 * awaiting any and no token is lost. Its result then takes the path of `updateMessage` (the one
 * validator, the same events, the same errors, the sync outbox), and the blocks it left untouched
 * are stored as the same objects, so `messages$` / `entry$` emit them unchanged and a tool-call
 * card beside streaming text does not re-render.
 *
 * Nothing is written when the recipe throws (the call rejects with its error) or when its result
 * is not valid content (`session/invalid_request`); an unknown session, entry, or a custom entry
 * rejects as `updateMessage` does. With `expected_revision` not matching, the recipe is not run
 * and the answer is `{ updated: false }`.
 */
export function updateMessage(
  store: Store,
  request: RecipeUpdateRequest,
  recipe: ContentRecipe,
): Promise<UpdateMessageResponse> {
  let checked: RecipeUpdateRequest
  try {
    // Everything but the content is checked before the call is queued, as for `updateMessage`.
    if (store.closed) throw new SessionError('session/storage', 'the store is closed')
    if (typeof recipe !== 'function') throw invalid('recipe: expected a function')
    checked = parseUpdate({ ...(request as object), content: [] })
  } catch (e) {
    return Promise.reject(e)
  }
  const { session_id, entry_id } = checked
  const engine = store.engine
  const submit = (): Promise<UpdateMessageResponse> =>
    engine.submitInternal(
      [session_id],
      (d) => {
        const entry = d.entry(session_id, entry_id)
        const stale = checked.expected_revision != null && entry?.revision !== checked.expected_revision
        // Not a message (or none): the update operation refuses it with the contract's error.
        if (entry?.kind !== 'message' || stale)
          return updateMessageOp(d, { ...checked, content: [] }, engine.ctx)
        const current = entry.message.content
        const produced = produce(current, recipe)
        const req = parseUpdate({ ...checked, content: produced })
        // The validator copies what it checks; blocks immer handed back untouched are the stored
        // ones (checked when they were stored), so they are kept as they are.
        const content = Object.freeze(
          req.content.map((block, i) => (produced[i] === current[i] ? current[i] : block)),
        ) as ContentBlock[]
        return updateMessageOp(d, { ...req, content }, engine.ctx)
      },
      'local',
      { session_id, entry_id },
    )
  // In the store's issue order: after a plain `updateMessage` issued before it in the same tick.
  return engine.inOrder ? engine.inOrder(submit) : submit()
}
