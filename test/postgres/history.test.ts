// The history suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/history.test.js'
