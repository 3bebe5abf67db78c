import {
  type AssistantMessage,
  type CustomEntry,
  type Json,
  type FunctionResultMessage,
  type JsonObject,
  type SessionImport,
} from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import {
  detectFormat,
  exportChatGpt,
  exportClaudeAi,
  exportOpenWebUi,
  importTranscript,
  type ImportResult,
} from '../src/index.js'
import { summarize } from '../src/session/inspect.js'
import {
  byId,
  childrenOf,
  codes,
  messages,
  misplacedResults,
  ofRole,
  pathIds,
  sample,
  unansweredCalls,
} from './helpers.js'

// ChatGPT, Claude.ai and Open WebUI exports: the real files in ../shared/samples (facts counted
// off the files with python over the parsed JSON, then written down here), and fixtures built
// from the apps' export shapes where no real file shows a variant (said so at each).

const load = async (rel: string): Promise<ImportResult> => {
  const r = await importTranscript(sample(rel))
  for (const s of r.sessions) expect(() => checkImport(s)).not.toThrow()
  return r
}
/** A sample that detection takes for `format`, loaded, with its first session. */
const loadDetected = async (rel: string, format: string): Promise<{ r: ImportResult; s: SessionImport }> => {
  expect(await detectFormat(sample(rel))).toBe(format)
  const r = await load(rel)
  return { r, s: r.sessions[0] }
}
const customs = (s: SessionImport, type?: string): CustomEntry[] =>
  s.entries.filter(
    (e): e is CustomEntry => e.kind === 'custom' && (type === undefined || e.custom_type === type),
  )
const roots = (s: SessionImport): string[] => childrenOf(s, null)
/** The message of an entry that must be one. */
const msgOf = (s: SessionImport, id: string) => {
  const e = byId(s).get(id)!
  if (e.kind !== 'message') throw new Error(`${id} is not a message`)
  return e.message
}
const texts = (s: SessionImport, ids: string[]): string[] =>
  ids.map((id) => {
    const e = byId(s).get(id)!
    return e.kind === 'message'
      ? e.message.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('')
      : `<${e.custom_type}>`
  })

describe('ChatGPT conversations.json', () => {
  const FORKS = 'chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json'

  it('edited prompt and regenerated reply: both forks kept, the active leaf where the user left it', async () => {
    expect(await detectFormat(sample(FORKS))).toBe('chatgpt')
    const r = await load(FORKS)
    expect(r.format).toBe('chatgpt')
    expect(r.sessions).toHaveLength(1)
    const s = r.sessions[0]
    // 13 mapping nodes: the message:null root, 1 hidden system, 5 user, 6 assistant.
    expect(summarize(s).by_role).toEqual({
      'custom:thread_root': 1,
      'custom:chatgpt/system': 1,
      user: 5,
      assistant: 6,
    })
    expect(s.meta.session_id).toBe('d5dc5307-6807-41a0-8b04-4acee626eeb7')
    // The message:null root is the session's one root.
    expect(roots(s)).toEqual(['aaa1f70c-100e-46f0-999e-10c8565f047f'])
    // Forks at bda8a275 (edited next prompt) and aaa20127 (regenerated reply); 3 leaves.
    expect(summarize(s).forks).toBe(2)
    expect(summarize(s).branches).toBe(3)
    expect(childrenOf(s, 'bda8a275-886d-4f59-b38c-d7037144f0d5')).toEqual([
      'aaa24023-b02f-4d49-b568-5856b41750c0',
      'aaa236a3-cdfc-4eb1-b5c5-790c6641f880',
    ])
    expect(texts(s, childrenOf(s, 'bda8a275-886d-4f59-b38c-d7037144f0d5'))).toEqual([
      'so cool bro',
      'hi again',
    ])
    expect(childrenOf(s, 'aaa20127-b9e3-44f6-afbe-a2475838625a')).toEqual([
      'd0d2a7df-d2fc-4df9-bf0a-1c5121e227ae',
      'f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8',
    ])
    // current_node f63b8e17: 8 nodes on the path, 7 messages of which 6 visible.
    expect(s.active_leaf).toBe('f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8')
    const path = pathIds(s)
    expect(path).toHaveLength(8)
    expect(path.filter((id) => byId(s).get(id)!.kind === 'message')).toHaveLength(6)
    // The dropped branch's reply was cut off: in_progress / interrupted.
    const cut = byId(s).get('ada93f81-f59e-4b31-933d-1357efd68bfc')!
    expect(cut.kind === 'message' && (cut.message as AssistantMessage).stop_reason).toBe('aborted')
    expect(cut.kind === 'message' && (cut.message as AssistantMessage).native_stop_reason).toBe('interrupted')
    expect(s.meta.title).toBe('Assist user with summary')
    expect(s.meta.message_count).toBe(11)
    expect(r.warnings).toEqual([])
  })

  it('browsing: code messages to the browser are calls, tool messages their results', async () => {
    const r = await load('chatgpt/librechat_chatgpt-2024_browsing-tool.json')
    expect(r.sessions.map((s) => [s.meta.session_id, s.meta.title])).toEqual([
      ['d6523d1e-7ec3-474f-a363-0e9dffdb3d93', 'Conversation 1. Web Search'],
      ['7c5ab593-dbab-43bd-862d-2c3c1eeebf6a', 'Conversation 2'],
    ])
    const [s, t] = r.sessions
    // 17 nodes = root, hidden system, 3 user, 7 assistant (4 of them calls), 5 tool messages.
    expect(summarize(s).by_role).toEqual({
      'custom:thread_root': 1,
      'custom:chatgpt/system': 1,
      user: 3,
      assistant: 7,
      function_result: 5,
    })
    const calls = messages(s)
      .flatMap((e) => e.message.content)
      .filter((b) => b.type === 'function_call')
    expect(
      calls.map((b) => b.type === 'function_call' && [b.function_id, (b.arguments as JsonObject).input]),
    ).toEqual([
      ['browser', 'search("Volkswagen Transporter fuel consumption with 8 people l/km")'],
      ['browser', 'mclick([0, 3, 7])'],
      ['browser', 'search("2014 Volkswagen Transporter fuel consumption")'],
      ['browser', 'mclick([0, 2, 13])'],
    ])
    // mclick([0, 3, 7]) got two quotes: both answer it, in order.
    const results = ofRole(s, 'function_result').map((e) => e.message as FunctionResultMessage)
    expect(results.map((m) => [m.function_id, (m.details as JsonObject).content_type])).toEqual([
      ['browser', 'tether_browsing_display'],
      ['browser', 'tether_quote'],
      ['browser', 'tether_quote'],
      ['browser', 'tether_browsing_display'],
      ['browser', 'tether_quote'],
    ])
    expect(results.filter((m) => m.function_call_id.startsWith('36b62905'))).toHaveLength(2)
    expect(unansweredCalls(s)).toEqual([])
    expect(misplacedResults(s)).toEqual([])
    expect(summarize(s).forks).toBe(0)
    expect(s.active_leaf).toBe('88a0cf9f-e860-4b34-8e7e-65f8346f4862')
    expect(pathIds(s)).toHaveLength(17)
    expect(t.active_leaf).toBe('73a2fe12-36bd-4cc2-8460-8108d16cc42d')
    expect(t.entries).toHaveLength(6)
    expect(r.warnings).toEqual([])
  })

  it('hidden custom instructions: kept on the path as custom entries, not chat turns', async () => {
    const r = await load('chatgpt/openwebui-importer_chatgpt-2025_hidden-custom-instructions.json')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('6857150a-cd20-800f-a5f7-d2404f94b935')
    expect(s.meta.title).toBe('How photosynthesis works')
    expect(new Date(s.meta.created_at).toISOString()).toBe('2025-06-21T20:24:42.971Z')
    expect(roots(s)).toEqual(['client-created-root'])
    // 13 nodes, linear: root, hidden system, hidden custom instructions, 5 user, 5 assistant.
    expect(summarize(s).by_role).toEqual({
      'custom:thread_root': 1,
      'custom:chatgpt/system': 1,
      'custom:chatgpt/custom-instructions': 1,
      user: 5,
      assistant: 5,
    })
    expect(pathIds(s)).toHaveLength(13)
    expect(s.active_leaf).toBe('1dc131c9-3245-4687-a994-fdd42c0fedac')
    const [ci] = customs(s, 'chatgpt/custom-instructions')
    expect(ci.id).toBe('a021bc5d-b3f2-4120-a182-c00058472c7b')
    expect(ci.data).toMatchObject({ hidden: true, user_profile: '' })
    expect(String((ci.data as JsonObject).user_instructions)).toMatch(
      /^The user provided the additional info about how they would l/,
    )
    expect(s.meta.message_count).toBe(10)
    expect(summarize(s).models).toEqual(['gpt-4o'])
    expect(ofRole(s, 'user')[0].message.content).toEqual([
      { type: 'text', text: 'Can you explain how photosynthesis works in simple terms?' },
    ])
  })

  // No real export shows multimodal parts, thoughts or a hidden system prompt with text (see the
  // samples README); this conversation follows the shapes exports carry in 2025.
  it('fixture: multimodal parts, thoughts, a hidden system prompt, an edited first prompt, current_node on the older branch', async () => {
    const node = (id: string, parent: string | null, children: string[], message: JsonObject | null) => ({
      id,
      parent,
      children,
      message,
    })
    const msg = (id: string, role: string, content: JsonObject, extra: JsonObject = {}) => ({
      id,
      author: { role, name: null, metadata: {} },
      create_time: 1750000000 + Number(id.slice(1)),
      content,
      status: 'finished_successfully',
      recipient: 'all',
      metadata: {},
      ...extra,
    })
    const conv = {
      title: 'Fixture',
      create_time: 1750000000,
      update_time: 1750000100,
      conversation_id: 'conv-1',
      current_node: 'm4',
      default_model_slug: 'gpt-4o',
      mapping: {
        root: node('root', null, ['m1'], null),
        m1: node(
          'm1',
          'root',
          ['m2', 'm5'],
          msg(
            'm1',
            'system',
            { content_type: 'text', parts: ['You are ChatGPT.'] },
            { metadata: { is_visually_hidden_from_conversation: true } },
          ),
        ),
        m2: node(
          'm2',
          'm1',
          ['m3'],
          msg('m2', 'user', {
            content_type: 'multimodal_text',
            parts: [
              {
                content_type: 'image_asset_pointer',
                asset_pointer: 'file-service://file-AbC',
                size_bytes: 1234,
                width: 10,
                height: 10,
              },
              'what is this?',
            ],
          }),
        ),
        m3: node(
          'm3',
          'm2',
          ['m4'],
          msg('m3', 'assistant', {
            content_type: 'thoughts',
            thoughts: [{ summary: 'Looking', content: 'It is a cat.' }],
          }),
        ),
        m4: node(
          'm4',
          'm3',
          [],
          msg(
            'm4',
            'assistant',
            { content_type: 'text', parts: ['A cat.'] },
            { metadata: { model_slug: 'o3', finish_details: { type: 'stop' } } },
          ),
        ),
        m5: node('m5', 'm1', [], msg('m5', 'user', { content_type: 'text', parts: ['edited first prompt'] })),
      },
    }
    const r = await importTranscript(JSON.stringify([conv]))
    expect(r.format).toBe('chatgpt')
    const s = r.sessions[0]
    expect(() => checkImport(s)).not.toThrow()
    expect(roots(s)).toEqual(['root'])
    expect(childrenOf(s, 'm1')).toEqual(['m2', 'm5'])
    expect(s.active_leaf).toBe('m4')
    expect(customs(s, 'chatgpt/system')[0].data).toMatchObject({
      hidden: true,
      content: { parts: ['You are ChatGPT.'] },
    })
    expect(msgOf(s, 'm2').content).toEqual([
      {
        type: 'file',
        attachment_id: 'file-service://file-AbC',
        name: 'file-AbC',
        mime: 'image/*',
        size: 1234,
      },
      { type: 'text', text: 'what is this?' },
    ])
    expect(msgOf(s, 'm3').content).toEqual([{ type: 'thinking', text: 'Looking\n\nIt is a cat.' }])
    expect(msgOf(s, 'm4')).toMatchObject({
      model: 'o3',
      provider: 'openai',
      stop_reason: 'end',
      native_stop_reason: 'stop',
    })
    expect(codes(r)).toEqual(['attachment-missing'])
  })

  // No real export in the samples has an upload; the shape is the one exports carry (2024-25):
  // `metadata.attachments` items {id, name, size, mime_type (older: mimeType), file_token_size},
  // an uploaded image also an `image_asset_pointer` part naming `file-service://<id>`, any other
  // file in no part at all.
  it('fixture: uploaded files in metadata.attachments become file blocks, each with a warning, and export back where they were', async () => {
    const node = (id: string, parent: string | null, children: string[], message: JsonObject | null) => ({
      id,
      parent,
      children,
      message,
    })
    const user = (id: string, content: JsonObject, attachments: Json[]) => ({
      id,
      author: { role: 'user', name: null, metadata: {} },
      create_time: 1750000000 + Number(id.slice(1)),
      content,
      status: 'finished_successfully',
      recipient: 'all',
      metadata: { attachments },
    })
    const conv = {
      title: 'Uploads',
      create_time: 1750000000,
      update_time: 1750000100,
      conversation_id: 'up',
      current_node: 'm4',
      mapping: {
        root: node('root', null, ['m1'], null),
        m1: node(
          'm1',
          'root',
          ['m2'],
          user(
            'm1',
            {
              content_type: 'multimodal_text',
              parts: [
                {
                  content_type: 'image_asset_pointer',
                  asset_pointer: 'file-service://file-Img1',
                  size_bytes: 48213,
                  width: 800,
                  height: 600,
                },
                'What does the report say about this chart?',
              ],
            },
            [
              {
                id: 'file-Img1',
                size: 48213,
                name: 'chart.png',
                mime_type: 'image/png',
                width: 800,
                height: 600,
              },
              {
                id: 'file-Pdf1',
                size: 183442,
                name: 'Q3 report.pdf',
                mime_type: 'application/pdf',
                file_token_size: 5120,
              },
            ],
          ),
        ),
        m2: node('m2', 'm1', ['m3'], {
          id: 'm2',
          author: { role: 'assistant', name: null, metadata: {} },
          create_time: 1750000002,
          content: { content_type: 'text', parts: ['Revenue rose.'] },
          status: 'finished_successfully',
          recipient: 'all',
          metadata: { model_slug: 'gpt-4o' },
        }),
        m3: node(
          'm3',
          'm2',
          ['m4'],
          user('m3', { content_type: 'text', parts: ['and this one?'] }, [
            { id: 'file-Csv1', name: 'data.csv', size: 2048, mimeType: 'text/csv' },
            'junk',
          ]),
        ),
        m4: node('m4', 'm3', [], {
          id: 'm4',
          author: { role: 'assistant', name: null, metadata: {} },
          create_time: 1750000004,
          content: { content_type: 'text', parts: ['It has 3 rows.'] },
          status: 'finished_successfully',
          recipient: 'all',
          metadata: {},
        }),
      },
    }
    const r = await importTranscript(JSON.stringify([conv]))
    const s = r.sessions[0]
    expect(() => checkImport(s)).not.toThrow()
    expect(msgOf(s, 'm1').content).toEqual([
      {
        type: 'file',
        attachment_id: 'file-Pdf1',
        name: 'Q3 report.pdf',
        mime: 'application/pdf',
        size: 183442,
      },
      {
        type: 'file',
        attachment_id: 'file-service://file-Img1',
        name: 'chart.png',
        mime: 'image/png',
        size: 48213,
      },
      { type: 'text', text: 'What does the report say about this chart?' },
    ])
    expect(msgOf(s, 'm3').content).toEqual([
      { type: 'file', attachment_id: 'file-Csv1', name: 'data.csv', mime: 'text/csv', size: 2048 },
      { type: 'text', text: 'and this one?' },
    ])
    // One warning per file (the image once, though both its part and the list name it); none of their bytes came in.
    const missing = r.warnings.filter((w) => w.code === 'attachment-missing')
    expect(missing.map((w) => w.message)).toEqual([
      expect.stringContaining(
        '"Q3 report.pdf" (application/pdf, 179.1 KB) is a file of the export archive, not in conversations.json',
      ),
      expect.stringContaining('"chart.png" (image/png, 47.1 KB)'),
      expect.stringContaining('"data.csv" (text/csv, 2.0 KB)'),
    ])
    expect(missing.every((w) => w.session_id === 'up')).toBe(true)
    expect(codes(r)).toEqual([
      'attachment-missing',
      'attachment-missing',
      'attachment-missing',
      'unknown-block',
    ])
    expect(r.attachments).toEqual([])
    // Out as ChatGPT writes it: the PDF only in metadata.attachments, the image in both; and back the same.
    const out = JSON.parse(exportChatGpt(s)) as {
      mapping: Record<string, { message: { content: { parts: unknown[] }; metadata: JsonObject } }>
    }[]
    const m1 = out[0].mapping.m1.message
    expect(m1.content.parts).toEqual([
      { content_type: 'image_asset_pointer', asset_pointer: 'file-service://file-Img1', size_bytes: 48213 },
      'What does the report say about this chart?',
    ])
    expect(m1.metadata.attachments).toEqual([
      { id: 'file-Pdf1', name: 'Q3 report.pdf', size: 183442, mime_type: 'application/pdf' },
      { id: 'file-Img1', name: 'chart.png', size: 48213, mime_type: 'image/png' },
    ])
    const back = (await importTranscript(JSON.stringify(out))).sessions[0]
    for (const id of ['m1', 'm3']) expect(msgOf(back, id).content).toEqual(msgOf(s, id).content)
  })

  it('hostile input: a mapping loop, a dangling current_node and a missing parent still give one rooted tree', async () => {
    const conv = {
      id: 'c',
      title: 'bad',
      current_node: 'nope',
      mapping: {
        a: {
          id: 'a',
          parent: 'b',
          children: ['b'],
          message: { id: 'a', author: { role: 'user' }, content: { content_type: 'text', parts: ['x'] } },
        },
        b: {
          id: 'b',
          parent: 'a',
          children: ['a'],
          message: {
            id: 'b',
            author: { role: 'assistant' },
            content: { content_type: 'text', parts: ['y'] },
          },
        },
        c: {
          id: 'c',
          parent: 'gone',
          children: [],
          message: { id: 'c', author: { role: 'user' }, content: { content_type: 'text', parts: [42] } },
        },
      },
    }
    const r = await importTranscript(JSON.stringify(conv))
    const s = r.sessions[0]
    expect(() => checkImport(s)).not.toThrow()
    expect(roots(s)).toEqual(['c:root'])
    expect(codes(r)).toEqual(expect.arrayContaining(['graph-mismatch', 'missing-parent', 'unknown-block']))
    await expect(importTranscript('[{"current_node": "a", "mapping": {"a": ')).rejects.toMatchObject({
      code: 'format/invalid',
    })
  })

  it('hostile input: the same conversation twice gets two sessions; junk values are not trusted', async () => {
    const conv = {
      conversation_id: 'same',
      title: 5,
      current_node: 7,
      mapping: {
        r: { id: 'r', parent: null, children: 'x', message: null },
        u: {
          id: 'u',
          parent: 'r',
          children: [],
          message: { author: 'nobody', content: 'text', create_time: 'soon' },
        },
      },
    }
    const r = await importTranscript(JSON.stringify([conv, conv]), { format: 'chatgpt' })
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual(['same', 'same~2'])
    for (const s of r.sessions) expect(() => checkImport(s)).not.toThrow()
    expect(codes(r)).toContain('duplicate-session')
    await expect(importTranscript('[1, 2, 3]', { format: 'claude-ai' })).rejects.toMatchObject({
      code: 'format/invalid',
    })
    const webui = await importTranscript(
      JSON.stringify({
        id: '',
        history: {
          currentId: 'x',
          messages: { x: { parentId: 'x', role: 'user', content: { weird: true } }, y: 'not a message' },
        },
      }),
    )
    expect(webui.format).toBe('open-webui')
    expect(() => checkImport(webui.sessions[0])).not.toThrow()
    expect(webui.sessions[0].entries.filter((e) => e.parent_id === null)).toHaveLength(1)
  })
})

describe('streaming', () => {
  /** The bytes as a stream of `size`-byte chunks: elements, strings, escapes and UTF-8 split anywhere. */
  const chunked = (bytes: Uint8Array, size: number): ReadableStream<Uint8Array> => {
    let at = 0
    return new ReadableStream({
      pull(c) {
        if (at >= bytes.length) return c.close()
        c.enqueue(bytes.slice(at, (at += size)))
      },
    })
  }

  it('an export read as a stream of tiny chunks, one conversation at a time, imports the same as whole', async () => {
    for (const rel of [
      'chatgpt/librechat_chatgpt-2024_browsing-tool.json',
      'claude-ai/openwebui-importer_claude-ai-2025_85-conversations_sanitized.json',
    ]) {
      const whole = await importTranscript(sample(rel))
      for (const size of [1, 7, 4096]) {
        const progress: number[] = []
        const r = await importTranscript(chunked(sample(rel), size), {
          format: whole.format,
          onProgress: (p) => void progress.push(p.done),
        })
        expect(r.sessions).toEqual(whole.sessions)
        expect(progress.at(-1)).toBe(sample(rel).byteLength)
      }
    }
  })

  it('a UI export array with an emoji title split across chunks, and broken arrays', async () => {
    const doc = new TextEncoder().encode(
      JSON.stringify([
        {
          id: 'r',
          title: '🧠 \\ "quoted" [x]',
          chat: {
            history: {
              currentId: 'm',
              messages: { m: { id: 'm', parentId: null, childrenIds: [], role: 'user', content: '{[}]' } },
            },
          },
        },
      ]),
    )
    const r = await importTranscript(chunked(doc, 3), { format: 'open-webui' })
    expect(r.sessions[0].meta.title).toBe('🧠 \\ "quoted" [x]')
    expect(texts(r.sessions[0], ['m'])).toEqual(['{[}]'])
    await expect(importTranscript('[{"id": "a", "chat": {}}', { format: 'open-webui' })).rejects.toThrow(
      /truncated/,
    )
    await expect(importTranscript('[{"id": "a"}] {}', { format: 'open-webui' })).rejects.toThrow(
      /after the end/,
    )
    await expect(importTranscript('[{"id": "a",}]', { format: 'open-webui' })).rejects.toMatchObject({
      code: 'format/invalid',
    })
  })
})

describe('detection from content', () => {
  it("an export quoted inside another tool's transcript, or one quoting another format, is taken for what it is", async () => {
    const pasted = JSON.stringify([{ mapping: { a: { children: [] } }, current_node: 'a' }])
    const claudeLine = JSON.stringify({
      parentUuid: null,
      uuid: 'u1',
      sessionId: 's',
      type: 'user',
      timestamp: '2026-01-01T00:00:00Z',
      message: { role: 'user', content: `why does this fail? ${pasted}` },
    })
    expect(await detectFormat(claudeLine)).toBe('claude-code')
    const chatgpt = JSON.stringify(
      {
        title: 'unified',
        conversation_id: 'c',
        current_node: 'r',
        mapping: {
          r: {
            id: 'r',
            parent: null,
            children: [],
            message: {
              author: { role: 'user' },
              content: { content_type: 'text', parts: ['"schema_version": "1.0"'] },
            },
          },
        },
      },
      null,
      2,
    )
    expect(await detectFormat(chatgpt)).toBe('chatgpt')
    expect(await detectFormat(JSON.stringify({ uuid: 'x', name: 'n', chat_messages: [] }, null, 2))).toBe(
      'claude-ai',
    )
    expect(
      await detectFormat(
        JSON.stringify(
          [{ id: 'r', title: 't', chat: { history: { messages: {}, currentId: null } } }],
          null,
          2,
        ),
      ),
    ).toBe('open-webui')
    expect(await detectFormat('[1, 2]')).toBeNull()
  })
})

describe('Claude.ai conversations.json', () => {
  it('2024 export out of time order: sorted by created_at into one chain, files named', async () => {
    const rel = 'claude-ai/claude-to-sqlite_claude-ai-2024_artifacts-unordered.json'
    const { r, s } = await loadDetected(rel, 'claude-ai')
    expect(s.meta.session_id).toBe('91098bc8-f2c4-427b-b71b-1e25efa2e871')
    expect(s.meta.title).toBe('LLM Pricing Calculator')
    expect(summarize(s).by_role).toEqual({ 'custom:thread_root': 1, user: 10, assistant: 10 })
    expect(summarize(s).forks).toBe(0)
    // Sorted (stable) the senders alternate; chat_messages[0] sits after [6].
    const path = pathIds(s).slice(1)
    expect(messages(s).length).toBe(20)
    expect(
      path.map((id) => (byId(s).get(id) as { message: { role: string } }).message.role[0]).join(''),
    ).toBe('ua'.repeat(10))
    expect(path[0]).toBe('287b1868-17d4-4660-9089-b3eb4ddecb1b')
    expect(path[6]).toBe('083850f6-fca7-40c3-916a-e57f7ae5f0fe')
    expect(s.active_leaf).toBe('f976a5e8-7642-474f-82c6-e9a2abf5883c')
    // [0] names 5 screenshots whose bytes the export does not hold.
    const files = (
      byId(s).get('083850f6-fca7-40c3-916a-e57f7ae5f0fe') as {
        message: { content: { type: string; name?: string; mime?: string }[] }
      }
    ).message.content.filter((b) => b.type === 'file')
    expect(files.map((f) => [f.name, f.mime])[0]).toEqual([
      'CleanShot 20241016 at 20.34.122x.png',
      'image/png',
    ])
    expect(files).toHaveLength(5)
    expect(codes(r)).toEqual(['attachment-missing'])
    expect(
      ofRole(s, 'assistant').every((e) =>
        e.message.content.some(
          (b) => b.type === 'text' && b.text.startsWith(' ') && b.text.includes('<antArtifact'),
        ),
      ),
    ).toBe(true)
  })

  it('85 conversations: one session each, empty ones too, same sender twice in a row kept in order', async () => {
    const r = await load('claude-ai/openwebui-importer_claude-ai-2025_85-conversations_sanitized.json')
    expect(r.sessions).toHaveLength(85)
    expect(r.sessions.reduce((n, s) => n + s.meta.message_count, 0)).toBe(557)
    expect(r.sessions.filter((s) => s.meta.message_count === 0)).toHaveLength(2)
    expect(r.sessions.reduce((n, s) => n + ofRole(s, 'user').length, 0)).toBe(283)
    expect(r.sessions.reduce((n, s) => n + ofRole(s, 'assistant').length, 0)).toBe(274)
    for (const s of r.sessions) {
      expect(roots(s)).toHaveLength(1)
      expect(summarize(s).forks).toBe(0)
    }
    const twice = r.sessions.find((s) => s.meta.session_id.startsWith('0f9e5a7b'))!
    expect(messages(twice).map((e) => e.message.role)).toEqual(['user', 'user'])
    expect(
      r.sessions.filter((s) => {
        const leaf = byId(s).get(s.active_leaf!)!
        return leaf.kind === 'message' && leaf.message.role === 'user'
      }),
    ).toHaveLength(4)
    const last = r.sessions.at(-1)!
    expect(last.meta.session_id).toBe('76a904ac-7838-4a01-9e91-020411c40566')
    expect(last.meta.title).toBe('How Photosynthesis Works')
    expect(last.meta.message_count).toBe(10)
    expect(last.active_leaf).toBe('97b74a7f-416f-4995-851f-2735017571ab')
    expect(texts(last, [pathIds(last)[1]])).toEqual([
      'Can you explain how photosynthesis works in simple terms?',
    ])
    expect(r.warnings).toEqual([])
  })

  // No real export shows parent_message_uuid, attachments with extracted_content or tool use
  // (see the samples README): this conversation follows the 2025 export's documented fields.
  it('fixture: parallel chains from the zero root, a retry, extracted attachments, tool use and its result', async () => {
    const ZERO = '00000000-0000-4000-8000-000000000000'
    const m = (
      uuid: string,
      sender: string,
      parent: string,
      at: string,
      content: JsonObject[],
      extra: JsonObject = {},
    ) => ({
      uuid,
      sender,
      parent_message_uuid: parent,
      created_at: at,
      text: '',
      content,
      attachments: [],
      files: [],
      ...extra,
    })
    const conv = {
      uuid: 'conv',
      name: 'Chains',
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:10:00Z',
      current_leaf_message_uuid: 'a1',
      chat_messages: [
        m('a2', 'assistant', 'h1', '2025-01-01T00:03:00Z', [{ type: 'text', text: 'retry' }]),
        m('h1', 'human', ZERO, '2025-01-01T00:01:00Z', [{ type: 'text', text: 'first' }], {
          attachments: [
            { file_name: 'notes.txt', file_size: 5, file_type: 'txt', extracted_content: 'hello' },
          ],
        }),
        m('a1', 'assistant', 'h1', '2025-01-01T00:02:00Z', [
          { type: 'text', text: 'let me look' },
          { type: 'tool_use', id: 'tu1', name: 'web_search', input: { query: 'x' } },
          {
            type: 'tool_result',
            tool_use_id: 'tu1',
            name: 'web_search',
            content: [{ type: 'text', text: 'found' }],
            is_error: false,
          },
          { type: 'text', text: 'done' },
        ]),
        m('h2', 'human', ZERO, '2025-01-01T00:05:00Z', [{ type: 'text', text: 'second chain' }]),
      ],
    }
    const r = await importTranscript(JSON.stringify([conv]))
    expect(r.format).toBe('claude-ai')
    const s = r.sessions[0]
    expect(() => checkImport(s)).not.toThrow()
    expect(roots(s)).toEqual(['conv:root'])
    expect(childrenOf(s, 'conv:root')).toEqual(['h1', 'h2'])
    expect(childrenOf(s, 'h1')).toEqual(['a2', 'a1'])
    expect(pathIds(s)).toEqual(['conv:root', 'h1', 'a1', 'a1:1', 'a1:2'])
    expect(texts(s, ['a1', 'a1:1', 'a1:2'])).toEqual(['let me look[function_call]', 'found', 'done'])
    expect(unansweredCalls(s)).toEqual([])
    expect(r.attachments).toEqual([
      {
        session_id: 'conv',
        attachment_id: 'h1:attachment-0',
        name: 'notes.txt',
        mime: 'text/plain',
        data: new TextEncoder().encode('hello'),
      },
    ])
    expect(summarize(s).forks).toBe(2)
  })
})

describe('Open WebUI', () => {
  it('the bare chat object from the database: 2 messages, currentId active, no branch', async () => {
    const rel = 'open-webui/openwebui-importer_chat-object-from-sqlite.json'
    const { r, s } = await loadDetected(rel, 'open-webui')
    // Its own id is "": the first message names the session.
    expect(s.meta.session_id).toBe('open-webui-5ae90291-abf9-453f-9f7d-78f3753af40c')
    expect(s.meta.title).toBe('🧠 Goldwater Rule Ethics')
    expect(pathIds(s)).toEqual([
      'open-webui-5ae90291-abf9-453f-9f7d-78f3753af40c:root',
      '5ae90291-abf9-453f-9f7d-78f3753af40c',
      'a9436447-add3-4bd8-a25f-6ce54b73903c',
    ])
    expect(s.active_leaf).toBe('a9436447-add3-4bd8-a25f-6ce54b73903c')
    const a = ofRole(s, 'assistant')[0].message as AssistantMessage
    expect(a).toMatchObject({
      model: 'deepseek/deepseek-chat:free',
      agent: 'DeepSeek: DeepSeek V3 (free)',
      usage: { input: 26, output: 310 },
      stop_reason: 'end',
    })
    // Seconds on messages, milliseconds at the top: both read as the same instant.
    expect(a.timestamp).toBe(1744577557000)
    expect(s.meta.created_at).toBe(1744577557127)
    // The publisher's SQL quote doubling is kept byte for byte.
    expect(JSON.stringify(s.entries)).toContain("you''re")
    expect(r.warnings).toEqual([])
  })

  // No real UI export (`[{id, user_id, title, chat}]`) nor one with a branch was found: this one
  // follows the shape Open WebUI's "Export chats" writes.
  it('fixture: the UI export array with a regenerated reply and an edited prompt, currentId on the older reply', async () => {
    const msg = (
      id: string,
      parentId: string | null,
      childrenIds: string[],
      role: string,
      content: string,
      timestamp: number,
    ) => ({
      id,
      parentId,
      childrenIds,
      role,
      content,
      timestamp,
      ...(role === 'assistant' && { model: 'llama3' }),
    })
    const chat = {
      id: 'row-1',
      user_id: 'u1',
      title: 'Branches',
      created_at: 1700000000,
      updated_at: 1700000100,
      chat: {
        title: 'Branches',
        models: ['llama3'],
        history: {
          currentId: 'a1',
          messages: {
            u1: msg('u1', null, ['a1', 'a2'], 'user', 'hi', 1700000001),
            a1: msg('a1', 'u1', [], 'assistant', 'hello', 1700000002),
            a2: msg('a2', 'u1', [], 'assistant', 'hello again', 1700000003),
            u2: msg('u2', null, [], 'user', 'hi (edited)', 1700000004),
            s0: msg('s0', 'u2', [], 'system', 'be brief', 1700000005),
          },
        },
      },
    }
    const r = await importTranscript(JSON.stringify([chat, { ...chat, id: 'row-2' }]))
    expect(r.format).toBe('open-webui')
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual(['row-1', 'row-2'])
    const s = r.sessions[0]
    expect(() => checkImport(s)).not.toThrow()
    expect(childrenOf(s, 'row-1:root')).toEqual(['u1', 'u2'])
    expect(childrenOf(s, 'u1')).toEqual(['a1', 'a2'])
    expect(s.active_leaf).toBe('a1')
    expect(customs(s, 'open-webui/system')[0].data).toEqual({ hidden: true, text: 'be brief' })
    expect(s.meta.metadata).toMatchObject({ format: 'open-webui', user_id: 'u1', models: ['llama3'] })
  })
})

/** What a chat-app export holds of a session, entry by entry: ids, parents, roles, texts. */
function view(s: SessionImport): unknown[] {
  return s.entries
    .map((e) => [
      e.id,
      e.parent_id,
      e.kind === 'custom' ? e.custom_type : e.message.role,
      e.kind === 'custom' ? e.data : e.message.content,
      e.kind === 'message' && e.message.role === 'function_result' ? e.message.function_call_id : null,
    ])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
}

/**
 * Each session imported `again` is valid and holds the same entries, id, title and active leaf
 * as the one at its index in `first`, and the same `also` where given.
 */
function expectSameSessions(
  first: SessionImport[],
  again: SessionImport[],
  also: (s: SessionImport) => unknown = () => null,
): void {
  first.forEach((s, i) => {
    const t = again[i]
    expect(() => checkImport(t)).not.toThrow()
    expect(view(t)).toEqual(view(s))
    expect([t.meta.session_id, t.meta.title, t.active_leaf, also(t)]).toEqual([
      s.meta.session_id,
      s.meta.title,
      s.active_leaf,
      also(s),
    ])
  })
}

describe("exports to the chat apps' shapes", () => {
  for (const rel of [
    'chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json',
    'chatgpt/librechat_chatgpt-2024_browsing-tool.json',
    'chatgpt/openwebui-importer_chatgpt-2025_hidden-custom-instructions.json',
  ]) {
    it(`ChatGPT: ${rel} exported and imported again is the same tree, texts and active leaf`, async () => {
      const first = await load(rel)
      const text = exportChatGpt(first.sessions)
      const again = await importTranscript(text)
      expect(again.format).toBe('chatgpt')
      expect(again.sessions).toHaveLength(first.sessions.length)
      expectSameSessions(first.sessions, again.sessions, (s) => [s.meta.created_at, summarize(s).forks])
      expect(again.warnings).toEqual([])
    })
  }

  it("Open WebUI: the chat object exported as the UI's array and imported again keeps messages, branches and currentId", async () => {
    const first = await load('open-webui/openwebui-importer_chat-object-from-sqlite.json')
    const doc = JSON.parse(exportOpenWebUi(first.sessions)) as JsonObject[]
    expect(doc[0]).toMatchObject({
      id: first.sessions[0].meta.session_id,
      chat: { history: { currentId: 'a9436447-add3-4bd8-a25f-6ce54b73903c' } },
    })
    const again = await importTranscript(JSON.stringify(doc))
    expect(view(again.sessions[0])).toEqual(view(first.sessions[0]))
    expect(again.sessions[0].active_leaf).toBe(first.sessions[0].active_leaf)
  })

  it('Open WebUI from another format: what it cannot hold (tool calls, thinking, custom entries) is left out, the branches stay', async () => {
    const r = await importTranscript(sample('chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json'))
    const again = (await importTranscript(exportOpenWebUi(r.sessions))).sessions[0]
    expect(() => checkImport(again)).not.toThrow()
    // The hidden system message and the root are gone; 11 messages and both forks remain.
    expect(again.meta.message_count).toBe(11)
    expect(summarize(again).forks).toBe(2)
    expect(again.active_leaf).toBe('f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8')
  })

  it('Claude.ai: both samples exported and imported again are the same trees, texts and active leaves (the 2024 one now with parent ids)', async () => {
    for (const rel of [
      'claude-ai/claude-to-sqlite_claude-ai-2024_artifacts-unordered.json',
      'claude-ai/openwebui-importer_claude-ai-2025_85-conversations_sanitized.json',
    ]) {
      const first = await load(rel)
      const doc = JSON.parse(exportClaudeAi(first.sessions)) as JsonObject[]
      expect(
        (doc[0].chat_messages as JsonObject[]).every((m) => typeof m.parent_message_uuid === 'string'),
      ).toBe(true)
      const again = await importTranscript(JSON.stringify(doc))
      expect(again.format).toBe('claude-ai')
      expectSameSessions(first.sessions, again.sessions)
    }
  })

  it('Claude.ai: a tool result and the reply after it go back inside their assistant message', async () => {
    const ZERO = '00000000-0000-4000-8000-000000000000'
    const conv = {
      uuid: 'conv',
      name: 'Tools',
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:10:00Z',
      chat_messages: [
        {
          uuid: 'h1',
          sender: 'human',
          parent_message_uuid: ZERO,
          created_at: '2025-01-01T00:01:00Z',
          text: 'q',
          content: [{ type: 'text', text: 'q' }],
          attachments: [],
          files: [],
        },
        {
          uuid: 'a1',
          sender: 'assistant',
          parent_message_uuid: 'h1',
          created_at: '2025-01-01T00:02:00Z',
          text: '',
          attachments: [],
          files: [],
          content: [
            { type: 'thinking', thinking: 'hm' },
            { type: 'tool_use', id: 'tu1', name: 'web_search', input: { query: 'x' } },
            {
              type: 'tool_result',
              tool_use_id: 'tu1',
              name: 'web_search',
              content: [{ type: 'text', text: 'found' }],
              is_error: false,
            },
            { type: 'text', text: 'done' },
          ],
        },
        {
          uuid: 'h2',
          sender: 'human',
          parent_message_uuid: 'a1',
          created_at: '2025-01-01T00:03:00Z',
          text: 'thanks',
          content: [{ type: 'text', text: 'thanks' }],
          attachments: [],
          files: [],
        },
      ],
    }
    const first = (await importTranscript(JSON.stringify([conv]))).sessions[0]
    expect(pathIds(first)).toEqual(['conv:root', 'h1', 'a1', 'a1:1', 'a1:2', 'h2'])
    const doc = JSON.parse(exportClaudeAi(first)) as { chat_messages: JsonObject[] }[]
    expect(doc[0].chat_messages.map((m) => [m.uuid, m.parent_message_uuid])).toEqual([
      ['h1', ZERO],
      ['a1', 'h1'],
      ['h2', 'a1'],
    ])
    expect(doc[0].chat_messages[1].content).toEqual(conv.chat_messages[1].content)
    const again = (await importTranscript(JSON.stringify(doc))).sessions[0]
    expect(view(again)).toEqual(view(first))
  })
})
