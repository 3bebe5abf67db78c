// The push suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/push.test.js'
