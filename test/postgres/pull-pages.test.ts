// The pull page size suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/pull-pages.test.js'
