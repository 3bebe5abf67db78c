// The worst-case requests and fairness suite of test/server against a server on PostgreSQL (a
// database of its own; see DataBackend in test/server/helpers.ts).
import './use-postgres.js'
import '../server/fuzz-work.test.js'
