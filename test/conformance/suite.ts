/**
 * The contract's scenario checklist (spec/session-manager-contract.md, section 6) as one suite,
 * written against `ConformanceClient` so it runs over every storage and transport. Each test is
 * named after its scenario number; derived checks are named D<n>; rules of sections 2-4 that no
 * scenario pins are named after their section (e.g. "2.7 ...").
 *
 * Scenarios that do NOT apply to the 14 base operations, and why:
 * - 19-37 (attachments.feature) and 55-59 (draft.feature), and D9, D13: put/get/list/delete-
 *   attachment and set-draft are not part of the 14 base functions yet (a later issue). The
 *   draft-neutrality half of D17 goes with them; its set-active-leaf half is covered here.
 * - 131-142 (pagination.feature) and D11, D12, D15: messages-tail and messages-range are later
 *   readers (a later issue). Paging of `session::messages` itself is covered by 115 and 118.
 * - 60-71 (engine_bridge, engine_reactivity, engine_roundtrip): they need a live bus, bridged
 *   instances and the fs adapter's files. Their semantics are covered by @pure scenarios here:
 *   60/61 bridged append + idempotency + not_found → 4, 5, 13, 76; 62 per-binding delivery and
 *   role filters → 81, 85; 63 status-changed with previous_status → 147; 64 metadata-filtered
 *   created → 49; 65 streamed turn to filtered subscribers → 156; 66 session_id scoping → 80;
 *   67 deleted with a metadata filter → 54; 68 lifecycle + list by metadata → 107, 124, 147;
 *   69 replay / update with expected_revision → 4, 157, 159; 70 fork then delete source → 97,
 *   ensure existing → 73; 71 stable not_found codes → 76. File records (JSONL lines, leaf
 *   records) have no equivalent in a browser store.
 * - 111 (manifest.feature): the `--manifest` subcommand of the worker binary; a browser library
 *   has no binary or manifest.
 * - 143-146 (persistence.feature): file-per-session layout, hostile-id filename encoding and
 *   restart replay belong to the server's JSONL file storage (packages/server). Restart of the
 *   IndexedDB store is a storage test of packages/core, not a contract scenario.
 * - D14 (mention search/get): internal mention functions, not part of the 14 base operations.
 */
import { describe } from 'vitest'
import type { ClientFactory } from './client.js'
import { appendFeature } from './features/append.js'
import { branchingFeature } from './features/branching.js'
import { derivedChecks } from './features/derived.js'
import { eventsFeature } from './features/events.js'
import { forkFeature } from './features/fork.js'
import { lifecycleFeature } from './features/lifecycle.js'
import { listFeature } from './features/list.js'
import { messagesFeature } from './features/messages.js'
import { metaFeature } from './features/meta.js'
import { rulesFeature } from './features/rules.js'
import { statusFeature } from './features/status.js'
import { updateMessageFeature } from './features/update-message.js'
import { Harness } from './harness.js'

export function conformanceSuite(label: string, factory: ClientFactory): void {
  describe(label, () => {
    // One harness per suite: it opens a fresh client (fresh clock, ids and storage) per test.
    const h = new Harness(factory)
    appendFeature(h)
    branchingFeature(h)
    lifecycleFeature(h)
    eventsFeature(h)
    forkFeature(h)
    listFeature(h)
    messagesFeature(h)
    metaFeature(h)
    statusFeature(h)
    updateMessageFeature(h)
    derivedChecks(h)
    rulesFeature(h)
  })
}
