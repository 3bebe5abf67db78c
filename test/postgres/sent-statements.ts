import type pg from 'pg'

/**
 * Records the text of every statement sent on the connections a storage takes for its commits
 * (`pool.connect()`, whichever connection it was): what a test counts a commit's statements by.
 */
export function sentStatements(pool: pg.Pool): string[] {
  const sent: string[] = []
  const patched = new WeakSet<object>()
  const record = (client: pg.PoolClient): void => {
    if (patched.has(client)) return
    patched.add(client)
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const q = args[0]
      sent.push(typeof q === 'string' ? q : ((q as { text?: string }).text ?? ''))
      return query(...args)
    }
  }
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>
  ;(pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    if (args.length) return (connect as (...a: unknown[]) => unknown)(...args)
    return connect().then((client) => (record(client), client))
  }
  return sent
}
