// The fast-append chain suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/sync-chain.test.js'
