// session::search (test/server/search.test.ts) against a server on PostgreSQL.
import './use-postgres.js'
import '../server/search.test.js'
