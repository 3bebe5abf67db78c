import { SessionError } from '../model/errors.js'
import type { Parser } from '../validation/validate.js'

// The stored forms of sealed records and their checks live with the other record checks
// (`validation/sealed-records.ts`), since a replicated change may carry them; re-exported here.
export {
  SEALED_METADATA_KEY,
  sealedAttachmentMeta,
  type EntryBox,
  sealedEntry,
  sealedMeta,
  type SealedAttachmentMeta,
  type SealedCustomEntry,
  type SealedEntry,
  type SealedField,
  type SealedMessageEntry,
  type SealedMeta,
} from '../validation/sealed-records.js'

/**
 * Runs a record check; a record that fails it is `session/integrity` (a stored or received
 * record is not what a writer holding the keys sealed), with the check's own words.
 */
export function checked<T>(parser: Parser<T>, value: unknown, path: string): T {
  try {
    return parser(value, path)
  } catch (e) {
    if (e instanceof SessionError)
      throw new SessionError('session/integrity', e.message.replace(/^session\/[a-z_]+: /, ''), { cause: e })
    throw e
  }
}
