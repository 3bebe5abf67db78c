// The route-enumeration, Host and cross-site suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/fuzz-auth.test.js'
