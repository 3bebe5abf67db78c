// The marker through relay and sync at once (test/sync/sealed-marker.test.ts) on PostgreSQL: the server's side checked in a pg_dump.
import './use-postgres.js'
import '../sync/sealed-marker.test.js'
