import { randomToken } from '../../util/random-token.js'

/**
 * A new incarnation id: drawn when a session is first written (or its marker recreated), so a
 * session deleted and created again under the same id is told apart from the one before (see
 * `Stamp.i`). Only writes and upgrades draw one: this module is fetched with them, not at start.
 */
export const freshIncarnation = randomToken
