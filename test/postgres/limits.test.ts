// The limits suite of test/server (bounded parsing, per-principal sockets, sessions and stored
// bytes across a restart, request rate, buffers) against a server on PostgreSQL.
import './use-postgres.js'
import '../server/limits.test.js'
