// The convergence property through real servers (test/server/convergence.test.ts) on
// PostgreSQL: two server processes on one database, the marker checked in a pg_dump.
import './use-postgres.js'
import '../server/convergence.test.js'
