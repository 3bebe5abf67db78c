import type { Store } from '@colloquy/core'
import type { Exporter } from '@colloquy/formats'
import { useEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react'
import { exportChat, exportFormats } from '../export.js'

/**
 * The export choices of one chat: one item per format `@colloquy/formats` writes. Closes on a
 * choice, on Escape (focus goes back to the toggle) and on a press anywhere outside `within`
 * (the row, so its toggle still toggles).
 */
export function ExportMenu({
  store,
  sessionId,
  within,
  onClose,
  onError,
}: {
  store: Store
  sessionId: string
  within: HTMLElement | null
  onClose(refocus: boolean): void
  onError(message: string): void
}): ReactNode {
  const menu = useRef<HTMLDivElement>(null)
  const [formats, setFormats] = useState<readonly Exporter[]>([])
  useEffect(() => {
    let live = true
    exportFormats().then(
      (f) => live && setFormats(f),
      (e: unknown) => onError(String(e)),
    )
    return () => void (live = false)
  }, [onError])
  useEffect(() => {
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus()
  }, [formats])
  useEffect(() => {
    const outside = (e: PointerEvent): void => {
      if (!(e.target instanceof Node) || !within?.contains(e.target)) onClose(false)
    }
    document.addEventListener('pointerdown', outside)
    return () => document.removeEventListener('pointerdown', outside)
  }, [within, onClose])

  const onKeyDown = (e: KeyboardEvent): void => {
    const items = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])]
    const at = items.indexOf(document.activeElement as HTMLElement)
    if (e.key === 'Escape') onClose(true)
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      items[(at + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus()
    }
  }
  const pick = (exporter: Exporter): void => {
    onClose(false)
    exportChat(store, sessionId, exporter).catch((e: unknown) =>
      onError(e instanceof Error ? e.message : String(e)),
    )
  }

  return (
    <div className="row-menu" role="menu" aria-label="Export chat" ref={menu} onKeyDown={onKeyDown}>
      {formats.map((f) => (
        <button key={f.id} type="button" role="menuitem" data-format={f.id} onClick={() => pick(f)}>
          Export as {f.label}
        </button>
      ))}
    </div>
  )
}
