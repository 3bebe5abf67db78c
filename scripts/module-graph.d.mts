// Types of module-graph.mjs, for the tests that read core's graph through it.
export interface GraphReport {
  arrows: number
  back: number
  backArrows: string[]
  circles: number[]
  circleFiles: string[][]
  folderArrows: number
  folderBack: string[]
  folderCircles: string[][]
  folderEdges: string[]
  upward: string[]
}
export interface ModuleGraph {
  root: string
  files: number
  perFolder: Record<string, number>
  all: GraphReport
  runtime: GraphReport
}
export const CORE_LAYERS: string[]
export function moduleGraph(root: string, layers?: string[]): ModuleGraph
