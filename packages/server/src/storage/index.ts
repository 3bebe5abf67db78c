import type { Storage } from '@colloquy/core'
import type { FeedStorage } from '../changes/change-feed.js'
import type { UsageSource } from '../usage.js'

/**
 * The storage seam: the server runs over any core `Storage`. A storage shared by several
 * processes adds what one process cannot know alone: its own change log (`FeedStorage`) and
 * per-principal usage counted where the data is (`UsageSource`). The file storage adds the usage
 * (its head index sums it); PostgreSQL adds both.
 */
export type ServerStorage = Storage & Partial<Pick<FeedStorage, 'changeFeed'>> & Partial<UsageSource>

export { fileStorage, type FileStorageOptions } from './file/file-storage.js'
export { memoryStorage, type MemoryStorageOptions } from './memory.js'
export { postgresStorage, type PostgresStorageOptions } from './postgres/storage.js'
export { hasOwnFeed } from '../changes/change-feed.js'
export { hasUsageSource } from '../usage.js'
