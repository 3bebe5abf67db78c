// The sync-of-attachments suite of test/server (the sync client and a real server) on PostgreSQL.
import './use-postgres.js'
import '../server/sync-attachments.test.js'
