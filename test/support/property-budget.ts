import fc from 'fast-check'
import { afterEach, beforeEach } from 'vitest'

// Every property runs inside its test's time, shrinking included. A property over real servers
// takes seconds a run; when one run fails, fast-check shrinks it by running it again many times,
// and that could outlast the test: the run then ended as a bare "Test timed out", the failure
// and its input lost. Interrupted a little before the test's own limit, fast-check reports
// the smallest failing input found so far with its error, or, interrupted before any failure (a
// run that never ends), fails naming the seed to replay. An interruption is always a failure:
// fewer runs than asked never passes quietly.
const base = fc.readConfigureGlobal()

beforeEach(({ task }) => {
  const limit = task.timeout - Math.max(2_000, task.timeout * 0.1)
  if (limit > 0) fc.configureGlobal({ ...base, interruptAfterTimeLimit: limit, markInterruptAsFailure: true })
})

afterEach(() => {
  fc.configureGlobal(base)
})
