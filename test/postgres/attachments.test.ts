// The streamed attachment endpoints suite of test/server against a server on PostgreSQL.
import './use-postgres.js'
import '../server/attachments.test.js'
