import { deleteDB } from 'idb'
import { SessionError } from '../../model/errors.js'
import { searchDatabasesOf } from './search-databases.js'

/**
 * Deletes a store's IndexedDB database (`indexedDbStorage({ name })`, default `"colloquy"`) and
 * every database kept beside it: the search index (`<name>:search`, which holds the words of every
 * message), so deleting a user's chats leaves nothing of them in the browser. Open stores on it,
 * in this tab or another, let go (their calls then reject: open the store again to start clean),
 * as do open search indexes; resolves once every database is gone.
 */
export async function deleteIndexedDbStore(name = 'colloquy'): Promise<void> {
  if (typeof indexedDB === 'undefined')
    throw new SessionError('session/storage', 'IndexedDB is not available here')
  await Promise.all([name, ...searchDatabasesOf(name)].map((db) => deleteDB(db)))
}
