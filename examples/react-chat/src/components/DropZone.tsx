import { useEffect, useRef, useState, type ReactNode } from 'react'
import type { PickedFile } from '../data/import-transcripts.js'
import { Icon } from './Icon.js'

const carriesFiles = (e: DragEvent): boolean => e.dataTransfer?.types.includes('Files') ?? false

/** The files of a drop, folders marked (they arrive as files that cannot be read). */
function pickedFiles(data: DataTransfer): PickedFile[] {
  const picked: PickedFile[] = []
  for (const item of data.items) {
    const file = item.kind === 'file' ? item.getAsFile() : null
    if (file) picked.push({ file, folder: item.webkitGetAsEntry()?.isDirectory === true })
  }
  return picked.length ? picked : [...data.files].map((file) => ({ file }))
}

/**
 * Files dropped anywhere on the app are imported. While files are dragged over the window, an
 * overlay says so; drags of anything else (text, links) are left alone.
 */
export function DropZone({ onFiles }: { onFiles(files: PickedFile[]): void }): ReactNode {
  const [over, setOver] = useState(false)
  const latest = useRef(onFiles)
  useEffect(() => {
    latest.current = onFiles
  }, [onFiles])

  useEffect(() => {
    // dragenter/dragleave fire for every element crossed: count them to know when it left.
    let depth = 0
    const enter = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      depth++
      setOver(true)
    }
    const dragOver = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      // Without this the browser would open the file in place of the app.
      e.preventDefault()
      e.dataTransfer!.dropEffect = 'copy'
    }
    const leave = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      depth = Math.max(0, depth - 1)
      if (depth === 0) setOver(false)
    }
    const drop = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      depth = 0
      setOver(false)
      const files = pickedFiles(e.dataTransfer!)
      if (files.length) latest.current(files)
    }
    window.addEventListener('dragenter', enter)
    window.addEventListener('dragover', dragOver)
    window.addEventListener('dragleave', leave)
    window.addEventListener('drop', drop)
    return () => {
      window.removeEventListener('dragenter', enter)
      window.removeEventListener('dragover', dragOver)
      window.removeEventListener('dragleave', leave)
      window.removeEventListener('drop', drop)
    }
  }, [])

  if (!over) return null
  return (
    <div className="drop-overlay" aria-hidden="true">
      <div className="drop-card">
        <Icon name="upload" size={28} />
        <strong>Drop to import</strong>
        <span className="muted small">
          Claude Code, Codex, Gemini CLI, OpenCode, unified JSON or OPA transcripts; ChatGPT, Claude.ai or
          Open WebUI exports
        </span>
      </div>
    </div>
  )
}
