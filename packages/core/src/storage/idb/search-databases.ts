// The one rule naming the search index's databases beside a store's: `enableSearch` (above this
// layer) opens them, `deleteIndexedDbStore` deletes them with the store's (an index holds the words
// of every message: deleting a store's data leaves none of them behind).

/** The index's database for the store's database `store` (`colloquy` → `colloquy:search`). */
export const searchDatabaseOf = (store: string, thinking: boolean): string =>
  `${store}:search${thinking ? '+thinking' : ''}`

/** Every index database a store's database may have beside it. */
export const searchDatabasesOf = (store: string): string[] => [
  searchDatabaseOf(store, false),
  searchDatabaseOf(store, true),
]
