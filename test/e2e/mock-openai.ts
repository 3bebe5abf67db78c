import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

/** What the mock received: the request as the example built it. */
export interface RecordedRequest {
  method: string
  path: string
  authorization: string | undefined
  body: unknown
}

export interface MockOpenAI {
  /** The API base to type into the example's settings (`…/v1`). */
  url: string
  requests: RecordedRequest[]
  close(): Promise<void>
}

/**
 * A local stand-in for an OpenAI-compatible API: `POST /v1/chat/completions` with `stream: true`
 * answers with server-sent `chat.completion.chunk` events, one word each, then `[DONE]`, as the
 * real API does. Listens on 127.0.0.1 and a free port; answers CORS preflights (the app runs on
 * another origin, as it would against a real endpoint).
 */
export async function startMockOpenAI(reply: (prompt: string) => string): Promise<MockOpenAI> {
  const requests: RecordedRequest[] = []
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': 'authorization, content-type, accept',
    'access-control-allow-methods': 'POST, OPTIONS',
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end()
    let raw = ''
    req.on('data', (c: Buffer) => (raw += c.toString()))
    req.on('end', () => {
      let body: { model?: string; stream?: boolean; messages?: { role: string; content: string }[] } = {}
      try {
        body = JSON.parse(raw)
      } catch {
        return void res.writeHead(400, cors).end('{"error":{"message":"bad json"}}')
      }
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      })
      if (req.url !== '/v1/chat/completions' || req.method !== 'POST')
        return void res.writeHead(404, cors).end()
      if (req.headers.authorization !== 'Bearer sk-test')
        return void res
          .writeHead(401, { ...cors, 'content-type': 'application/json' })
          .end('{"error":{"message":"Incorrect API key provided"}}')
      res.writeHead(200, { ...cors, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const prompt = body.messages?.filter((m) => m.role === 'user').at(-1)?.content ?? ''
      const words = reply(prompt).match(/\s*\S+/g) ?? []
      const chunk = (delta: object, finish: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
      let i = 0
      res.write(chunk({ role: 'assistant', content: '' }))
      const timer = setInterval(() => {
        if (i < words.length) return void res.write(chunk({ content: words[i++] }))
        clearInterval(timer)
        res.write(chunk({}, 'stop'))
        res.end('data: [DONE]\n\n')
      }, 15)
      // The response's close, not the request's (that one fires as soon as the body is read).
      res.on('close', () => clearInterval(timer))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  }
}
