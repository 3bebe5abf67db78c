import { useRef, type ReactNode } from 'react'
import type { PickedFile } from '../data/import-transcripts.js'
import { Icon } from './Icon.js'

/** "Import…": picks transcript files (any name: the importer tells formats apart by content). */
export function ImportButton({ onFiles }: { onFiles(files: PickedFile[]): void }): ReactNode {
  const input = useRef<HTMLInputElement>(null)
  return (
    <>
      <button
        type="button"
        className="import-button"
        title="Import transcripts (or drop them anywhere)"
        onClick={() => input.current?.click()}
      >
        <Icon name="upload" /> Import…
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        aria-label="Import transcripts"
        onChange={(e) => {
          const files = [...(e.target.files ?? [])]
          // Cleared, so picking the same file again is a change too.
          e.target.value = ''
          if (files.length) onFiles(files.map((file) => ({ file })))
        }}
      />
    </>
  )
}
