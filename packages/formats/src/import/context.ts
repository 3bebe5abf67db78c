import type { ImportedAttachment, ImportOptions } from '../types.js'
import { Skipped, Warnings } from './warnings.js'

/** What every importer writes to while it runs; `importTranscript` turns it into the result. */
export class ImportContext {
  readonly warnings = new Warnings()
  readonly skipped = new Skipped()
  readonly attachments: ImportedAttachment[] = []
  readonly now: () => number
  constructor(readonly options: ImportOptions = {}) {
    this.now = options.now ?? Date.now
  }
}
