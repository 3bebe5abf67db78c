// The names, mimes and quotas suite of test/server against a server on PostgreSQL (a database
// per run, kept across the run's restarts; see DataBackend in test/server/helpers.ts).
import './use-postgres.js'
import '../server/fuzz-names.test.js'
