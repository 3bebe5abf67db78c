import type { Engine } from '../engine/engine.js'
import type { RelayMessage } from './message.js'
import { isObject, isString, isTime } from './message.js'

// The receiving half of the multi-tab relay (`relay.ts`): the checks of the commits other tabs
// post, and folding those that pass in. Fetched on the first commit message or with the
// engine's batch code; a tab nobody writes beside answers presence with `relay.ts` alone.

/*
 * What other tabs post is checked before it is used: a tab running another version of the app
 * (or any script of the origin) may post anything on the channel, and `fold` dereferences what
 * it is given while it changes the state, so a malformed payload would leave the state half
 * changed with nothing announced. The check is of the shape `fold`, `State` and the events'
 * subscribers rely on, not of the entries' content: that was checked by the tab that wrote them
 * (the full record validators are fetched on first use and would cost every relayed token a
 * walk of the whole message). A message that fails it is dropped.
 */
const isHead = (v: unknown): boolean =>
  isObject(v) &&
  Number.isSafeInteger(v.v) &&
  (v.leaf === null || isString(v.leaf)) &&
  isObject(v.meta) &&
  isString(v.meta.session_id) &&
  (v.attachments === undefined || Array.isArray(v.attachments))
const isEntry = (v: unknown): boolean =>
  isObject(v) &&
  isString(v.id) &&
  (v.parent_id === null || isString(v.parent_id)) &&
  Number.isSafeInteger(v.revision) &&
  isTime(v.timestamp) &&
  (v.kind === 'message' || v.kind === 'custom')
const isSessionEntries = (v: unknown): boolean =>
  Array.isArray(v) && v.length === 2 && isString(v[0]) && Array.isArray(v[1]) && v[1].every(isEntry)
/** What `EventBus` filters on: the trigger and the payload's session. */
const isEvent = (e: unknown): boolean =>
  isObject(e) &&
  isString(e.trigger_type) &&
  isObject(e.payload) &&
  isString(e.payload.session_id) &&
  (e.session_metadata == null || isObject(e.session_metadata))
const isRelayMessage = (m: unknown): m is RelayMessage => {
  if (!isObject(m) || !isObject(m.payload) || !Array.isArray(m.events) || !m.events.every(isEvent))
    return false
  const p = m.payload
  return (
    Array.isArray(p.deleted) &&
    p.deleted.every(isString) &&
    Array.isArray(p.heads) &&
    p.heads.every(isHead) &&
    Array.isArray(p.entries) &&
    p.entries.every(isSessionEntries)
  )
}

/** Folds in a commit message (one commit, or several gathered), dropping what fails the check. */
export function receive(engine: Engine, data: unknown): void {
  if (Array.isArray(data)) {
    for (const m of data) if (isRelayMessage(m)) engine.applyExternal('tab', m.payload, m.events)
  } else if (isRelayMessage(data)) engine.applyExternal('tab', data.payload, data.events)
}
