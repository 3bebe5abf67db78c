// The load of S6 (workloads/s6-fairness.ts), in a process of its own so that reading its large
// answers never delays the canary's timing in the bench process:
//   node flood.mjs <url> <token> <requests.json> <concurrency> <duration ms>
// requests.json: [{ name, method, path, body? }]; `{{n}}` in a path or body becomes a counter,
// so every push carries new entries. Each of <concurrency> loops sends the requests in turn,
// each awaited, until the duration is over; prints "started" first and one JSON line of
// { name: { count, statuses, maxMs } } at the end.
import { readFileSync } from 'node:fs'

const [url, token, file, concurrency, duration] = process.argv.slice(2)
const requests = JSON.parse(readFileSync(file, 'utf8'))
const stats = {}
let n = 0
const end = Date.now() + Number(duration)

async function send(r) {
  const k = String(++n)
  const started = performance.now()
  let status
  try {
    const res = await fetch(url + r.path.replaceAll('{{n}}', k), {
      method: r.method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: r.body === undefined ? undefined : r.body.replaceAll('{{n}}', k),
    })
    await res.arrayBuffer()
    status = res.status
  } catch (e) {
    status = `error ${e.cause?.code ?? e.message}`
  }
  const ms = performance.now() - started
  const s = (stats[r.name] ??= { count: 0, statuses: {}, maxMs: 0 })
  s.count++
  s.statuses[status] = (s.statuses[status] ?? 0) + 1
  s.maxMs = Math.max(s.maxMs, Math.round(ms))
}

process.stdout.write('started\n')
await Promise.all(
  Array.from({ length: Number(concurrency) }, async (_, k) => {
    for (let i = k; Date.now() < end; i++) await send(requests[i % requests.length])
  }),
)
process.stdout.write(`${JSON.stringify(stats)}\n`)
