// The security suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/security.test.js'
