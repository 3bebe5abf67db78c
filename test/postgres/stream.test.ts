// The stream suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/stream.test.js'
