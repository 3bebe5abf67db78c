/**
 * The contract's scenario checklist (spec/session-manager-contract.md, section 6) as one suite,
 * written against `ConformanceClient` so it runs over every storage and transport. Each test is
 * named after its scenario number; derived checks are named D<n>; rules of sections 2-4 that no
 * scenario pins are named after their section (e.g. "2.7 ...").
 *
 * Attachments (19-37, D9, D13), drafts (55-59), messages-tail/range (131-142, D11, D12, D15)
 * and the mention provider (D14) run here too. Scenario 27 needs a store configured with a
 * 4-byte attachment limit, so it runs under a second harness (in process; the server's limit is
 * fixed at start, and its refusal of oversized uploads is a server test). The file-system halves of 19 and
 * 25 ("the attachment folder exists/is gone") and the restart of 26 are storage tests of the
 * server's file storage; here they are checked through reads.
 *
 * Scenarios that do NOT apply, and why:
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
 */
import { describe } from 'vitest'
import type { ClientFactory } from './client.js'
import { appendFeature } from './features/append.js'
import { attachmentLimitFeature, attachmentsFeature } from './features/attachments.js'
import { draftFeature } from './features/draft.js'
import { mentionFeature } from './features/mention.js'
import { paginationFeature } from './features/pagination.js'
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

/** `configurableLimits: false` for a transport whose server limits are fixed at start (HTTP). */
export function conformanceSuite(
  label: string,
  factory: ClientFactory,
  options: { configurableLimits?: boolean; skip?: (name: string) => boolean } = {},
): void {
  describe(label, () => {
    // One harness per suite: it opens a fresh client (fresh clock, ids and storage) per test.
    const h = new Harness(factory, undefined, options.skip)
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
    attachmentsFeature(h)
    draftFeature(h)
    paginationFeature(h)
    mentionFeature(h)
  })
  if (options.configurableLimits === false) return
  describe(`${label} (max_attachment_bytes 4)`, () => {
    attachmentLimitFeature(new Harness(factory, { max_attachment_bytes: 4 }))
  })
}
