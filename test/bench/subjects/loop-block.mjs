// Preloaded into the server by S6 (`node --import loop-block.mjs cli.js ...`): the longest time
// the event loop was held between two signals. `maxMs` is wall time, which a loaded machine
// inflates (the process waits for a core); `maxCpuMs` is the CPU time the process spent between
// two turns of a 2 ms timer, which it barely changes: what one turn of work costs.
// On SIGUSR2 it writes one line to stderr, `loop-block {"maxMs":…,"maxCpuMs":…}`, and starts again.
import { monitorEventLoopDelay } from 'node:perf_hooks'

const h = monitorEventLoopDelay({ resolution: 5 })
h.enable()
let maxCpu = 0
let last = process.cpuUsage()
setInterval(() => {
  const now = process.cpuUsage()
  const cpu = now.user - last.user + (now.system - last.system)
  last = now
  if (cpu > maxCpu) maxCpu = cpu
}, 2).unref()
process.on('SIGUSR2', () => {
  const line = { maxMs: Math.round(h.max / 1e5) / 10, maxCpuMs: Math.round(maxCpu / 100) / 10 }
  h.reset()
  maxCpu = 0
  process.stderr.write(`loop-block ${JSON.stringify(line)}\n`)
})
