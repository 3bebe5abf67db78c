import { it } from 'vitest'
import { checkImport } from '@colloquy/core'
import { importTranscript, detectFormat, summarize } from '../src/index.js'
import { sample } from './helpers.js'
it('x', async () => {
  for (const f of ['chatgpt/librechat_chatgpt-2024_edit-and-regenerate-forks.json','chatgpt/librechat_chatgpt-2024_browsing-tool.json','chatgpt/openwebui-importer_chatgpt-2025_hidden-custom-instructions.json','claude-ai/claude-to-sqlite_claude-ai-2024_artifacts-unordered.json','claude-ai/openwebui-importer_claude-ai-2025_85-conversations_sanitized.json','open-webui/openwebui-importer_chat-object-from-sqlite.json']) {
    const r = await importTranscript(sample(f))
    console.log(f, await detectFormat(sample(f)), r.sessions.length, JSON.stringify(r.warnings.slice(0,3)), r.warnings.length)
    for (const s of r.sessions.slice(0, 3)) { checkImport(s); const x = summarize(s); console.log(x.title, x.entries, JSON.stringify(x.by_role), 'forks', x.forks, 'branches', x.branches, 'path', x.active_path, s.active_leaf) }
  }
})
