import type { Database, SqlJsStatic, SqlValue } from 'sql.js'
import type { ImportContext } from '../import/context.js'
import { FormatError } from '../errors.js'
import { OcCollector } from './storage.js'
import type { OcSession } from './import.js'
import type { SqliteOptions } from '../types.js'
import { isObj, type Obj } from '../values.js'

// OpenCode's 2026 SQLite database (opencode.db). Message and part rows keep their JSON minus
// `id`/`sessionID`/`messageID` in `data`; the session row spreads its fields over columns.
// sql.js (SQLite compiled to WebAssembly) is imported only when such a file is seen.

let loaded: Promise<SqlJsStatic> | undefined
let loadedWith: SqliteOptions | undefined

async function sqlJs(options: SqliteOptions = {}): Promise<SqlJsStatic> {
  if (!loaded || loadedWith !== options) {
    loadedWith = options
    loaded = import('sql.js').then(({ default: init }) =>
      init({
        ...(options.locateFile && { locateFile: options.locateFile }),
        ...(options.wasmBinary && {
          wasmBinary:
            options.wasmBinary instanceof Uint8Array
              ? (options.wasmBinary.slice().buffer as ArrayBuffer)
              : options.wasmBinary,
        }),
      }),
    )
    loaded.catch(() => {
      loaded = undefined
    })
  }
  return loaded
}

function* rows(db: Database, sql: string): Generator<Record<string, SqlValue>> {
  const stmt = db.prepare(sql)
  try {
    while (stmt.step()) yield stmt.getAsObject()
  } finally {
    stmt.free()
  }
}

const json = (v: SqlValue | undefined): unknown => {
  if (typeof v !== 'string') return undefined
  try {
    return JSON.parse(v)
  } catch {
    return undefined
  }
}
const val = (v: SqlValue | undefined): string | number | undefined =>
  typeof v === 'string' || typeof v === 'number' ? v : undefined

/** The session row back in the storage JSON shape, so one mapper serves both. */
function sessionInfo(r: Record<string, SqlValue>): Obj {
  const info: Obj = {
    id: r.id,
    projectID: val(r.project_id),
    parentID: val(r.parent_id) ?? undefined,
    slug: val(r.slug),
    directory: val(r.directory),
    title: val(r.title),
    version: val(r.version),
    time: {
      created: val(r.time_created),
      updated: val(r.time_updated),
      compacting: val(r.time_compacting),
      archived: val(r.time_archived),
    },
  }
  if (r.summary_additions != null || r.summary_files != null) {
    info.summary = {
      additions: val(r.summary_additions),
      deletions: val(r.summary_deletions),
      files: val(r.summary_files),
    }
  }
  if (typeof r.share_url === 'string') info.share = { url: r.share_url }
  const revert = json(r.revert)
  if (isObj(revert)) info.revert = revert
  return info
}

export async function readOpenCodeDb(bytes: Uint8Array, ctx: ImportContext): Promise<OcSession[]> {
  const SQL = await sqlJs(ctx.options.sqlite)
  let db: Database
  try {
    db = new SQL.Database(bytes)
  } catch (e) {
    throw new FormatError('format/invalid', `not a readable SQLite database: ${(e as Error).message}`)
  }
  try {
    const tables = new Set(
      [...rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")].map((r) => String(r.name)),
    )
    if (!tables.has('message') || !tables.has('part'))
      throw new FormatError('format/invalid', 'an SQLite database without OpenCode message and part tables')
    const c = new OcCollector()
    if (tables.has('session'))
      for (const r of rows(db, 'SELECT * FROM session')) c.session(String(r.id), sessionInfo(r))
    if (tables.has('project'))
      for (const r of rows(db, 'SELECT id, worktree FROM project'))
        c.project(String(r.id), { worktree: val(r.worktree) })
    for (const r of rows(db, 'SELECT id, session_id, data FROM message ORDER BY session_id, id')) {
      const data = json(r.data)
      if (!isObj(data)) ctx.warnings.add('bad-row', `message row ${String(r.id)} has no JSON data; skipped`)
      // 1.16 keeps the ids in columns only: the columns win over anything left in the JSON.
      else c.message(String(r.id), String(r.session_id), { ...data, id: r.id, sessionID: r.session_id })
    }
    for (const r of rows(db, 'SELECT id, message_id, session_id, data FROM part ORDER BY message_id, id')) {
      const data = json(r.data)
      if (!isObj(data)) ctx.warnings.add('bad-row', `part row ${String(r.id)} has no JSON data; skipped`)
      else c.part(String(r.id), String(r.message_id), String(r.session_id), data)
    }
    if (tables.has('todo')) {
      const todos = new Map<string, Obj[]>()
      for (const r of rows(db, 'SELECT * FROM todo ORDER BY session_id, position')) {
        const list = todos.get(String(r.session_id)) ?? []
        list.push({ content: val(r.content), status: val(r.status), priority: val(r.priority) })
        todos.set(String(r.session_id), list)
      }
      for (const [sid, list] of todos) c.todos(sid, list)
    }
    // 1.16 also logs every bus event in `event`: a replay log of what the tables already hold.
    for (const t of ['permission', 'session_share', 'session_message', 'event'])
      if (tables.has(t)) ctx.skipped.add(`table ${t}`)
    return c.done(ctx)
  } finally {
    db.close()
  }
}
