// Core's folders form layers (docs/architecture.md): a folder imports only folders below it and
// no file reaches itself again through its imports. Read from the sources by the same script the
// layout figures come from (`node scripts/module-graph.mjs --layers=core`).
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CORE_LAYERS, moduleGraph } from '../../../scripts/module-graph.mjs'

const graph = moduleGraph(fileURLToPath(new URL('../src', import.meta.url)), CORE_LAYERS)

describe("core's module graph", () => {
  it('has no circle, type-only imports included', () => {
    expect(graph.all.circleFiles).toStrictEqual([])
    expect(graph.all.folderCircles).toStrictEqual([])
  })

  it('has no arrow from a folder to one above it, and every folder is a declared layer', () => {
    expect(graph.all.upward).toStrictEqual([])
    expect(Object.keys(graph.perFolder).filter((d) => !CORE_LAYERS.includes(d))).toStrictEqual([])
  })
})
