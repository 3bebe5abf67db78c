import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { cleanupAfterEach, startServer } from './helpers.js'

// A push over the live stream is answered with two messages: the echo of its changes and the
// `pushed` answer. They leave the server in one write, so they reach a client in one read.
const { defer } = cleanupAfterEach('ws-gather')

/** A WebSocket spoken by hand, to see how the server's frames arrive (which reads hold which frames). */
async function rawSocket(
  url: string,
  path: string,
  token: string,
): Promise<{ socket: Socket; reads: string[][]; send(text: string): void }> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  const reads: string[][] = []
  let buf = Buffer.alloc(0)
  let upgraded = false
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        if (!buf.subarray(0, end).toString().startsWith('HTTP/1.1 101'))
          return reject(new Error(buf.toString()))
        upgraded = true
        buf = buf.subarray(end + 4)
        resolve()
      }
      // Whole unmasked text frames (the server never masks), each read's frames together.
      const frames: string[] = []
      for (;;) {
        if (buf.length < 2) break
        let len = buf[1] & 0x7f
        let at = 2
        if (len === 126) [len, at] = [buf.readUInt16BE(2), 4]
        else if (len === 127) [len, at] = [Number(buf.readBigUInt64BE(2)), 10]
        if (buf.length < at + len) break
        frames.push(buf.subarray(at, at + len).toString())
        buf = buf.subarray(at + len)
      }
      if (frames.length) reads.push(frames)
    })
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    )
  })
  const send = (text: string): void => {
    const payload = Buffer.from(text)
    const mask = randomBytes(4)
    const head =
      payload.length < 126
        ? Buffer.from([0x81, 0x80 | payload.length])
        : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff])
    socket.write(Buffer.concat([head, mask, payload.map((b, i) => b ^ mask[i % 4])]))
  }
  return { socket, reads, send }
}

const until = async (check: () => boolean, what: string): Promise<void> => {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('live stream writes', () => {
  it("a push's echo and its answer reach the client in one read", async () => {
    const s = await startServer(['--memory', '--token', 'alice=tok-a'])
    defer(() => s.stop())
    const ws = await rawSocket(s.url, '/sync/stream?since=0', 'tok-a')
    defer(async () => void ws.socket.destroy())
    const types = (): string[] => ws.reads.flat().map((f) => (JSON.parse(f) as { type: string }).type)
    await until(() => types().includes('ready'), 'ready')

    const meta = {
      session_id: 'g-1',
      title: 'g',
      description: '',
      status: 'idle',
      kind: 'user',
      created_at: 1,
      updated_at: 1,
      message_count: 0,
    }
    for (let i = 0; i < 5; i++) {
      const before = ws.reads.length
      const mutations =
        i === 0
          ? [{ id: 1, change: { type: 'meta', meta, create: true } }]
          : [
              {
                id: 2 * i,
                change: {
                  type: 'entry',
                  session_id: 'g-1',
                  entry: {
                    id: `e${i}`,
                    parent_id: i === 1 ? null : `e${i - 1}`,
                    timestamp: 1,
                    revision: 0,
                    kind: 'message',
                    message: { role: 'user', content: [{ type: 'text', text: `m${i}` }], timestamp: 1 },
                  },
                  base_revision: null,
                },
              },
              { id: 2 * i + 1, change: { type: 'leaf', session_id: 'g-1', entry_id: `e${i}` } },
            ]
      ws.send(JSON.stringify({ type: 'push', id: `p${i}`, mutations }))
      await until(
        () =>
          ws.reads
            .slice(before)
            .flat()
            .some((f) => f.includes('"pushed"')),
        `the answer to push ${i}`,
      )
      const after = ws.reads
        .slice(before)
        .map((frames) => frames.map((f) => (JSON.parse(f) as { type: string }).type))
      // One read: the changes first (they are in the log when the answer says where), then the answer.
      expect(after, `push ${i}`).toStrictEqual([['changes', 'pushed']])
    }
  })
})
