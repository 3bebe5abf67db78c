// End-to-end encrypted sync (test/server/e2e-sync.test.ts) on PostgreSQL: the marker checked in a pg_dump.
import './use-postgres.js'
import '../server/e2e-sync.test.js'
