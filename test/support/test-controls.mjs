/**
 * The contract's test clock and ids for running the conformance suite against a real server:
 * the clock starts at 1000000 and moves only when told (`POST /test/clock`), ids are sequential
 * per kind (`s_001`, `e_001`). Only a server started by test/support/test-server.mjs with
 * `--test-clock` has them; the installed `colloquy-server` never does.
 */
export class TestControls {
  #t = 1_000_000
  #counters = { session: 0, entry: 0, attachment: 0 }

  now = () => this.#t
  newId = (kind) => `${kind[0]}_${String(++this.#counters[kind]).padStart(3, '0')}`

  setClock(input) {
    if (typeof input?.now === 'number' && Number.isSafeInteger(input.now)) this.#t = input.now
    if (typeof input?.advance === 'number' && Number.isSafeInteger(input.advance)) this.#t += input.advance
    return this.#t
  }

  reset() {
    this.#t = 1_000_000
    this.#counters = { session: 0, entry: 0, attachment: 0 }
  }

  /**
   * `POST /test/clock` and `POST /test/reset` on the server's app. Added after the server's own
   * middleware, so the same gate (Host, credentials, rate, cross-site) runs before them.
   * `deleteAll` deletes every session.
   */
  install(app, deleteAll) {
    // The clock and the reset act on every session: only a caller granted all of them (the
    // local user, or any principal with tenancy off) may use them, never one tenant.
    const refused = (c) =>
      c.get('access')?.scope.kind !== 'all'
        ? c.json(
            {
              error: {
                code: 'auth/forbidden',
                message:
                  'auth/forbidden: the test clock and reset act on every session: not for a caller scoped to its own',
              },
            },
            403,
          )
        : undefined
    app.post('/test/clock', async (c) => {
      const refusal = refused(c)
      if (refusal) return refusal
      const text = await c.req.text()
      let input
      try {
        input = text.trim() ? JSON.parse(text) : {}
      } catch {
        return c.json(
          {
            error: {
              code: 'session/invalid_request',
              message: 'session/invalid_request: the body is not JSON',
            },
          },
          400,
        )
      }
      return c.json({ now: this.setClock(input) })
    })
    app.post('/test/reset', async (c) => {
      const refusal = refused(c)
      if (refusal) return refusal
      await deleteAll()
      this.reset()
      return c.json({ ok: true })
    })
  }
}
