import { useEffect, useRef, type KeyboardEvent, type ReactNode } from 'react'
import type { ExportKind } from '../data/export-session.js'

const ITEMS: { kind: ExportKind; label: string }[] = [
  { kind: 'unified', label: 'Export as unified JSON' },
  { kind: 'opa', label: 'Export as OPA archive' },
]

/**
 * The export choices of one chat, under its row. Closes on a choice, on Escape (focus goes back
 * to the toggle) and on a press anywhere outside `within` (the row, so its toggle still toggles).
 */
export function ExportMenu({ within, onPick, onClose }: { within: HTMLElement | null; onPick(kind: ExportKind): void; onClose(refocus: boolean): void }): ReactNode {
  const menu = useRef<HTMLDivElement>(null)
  useEffect(() => {
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus()
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

  return (
    <div className="row-menu" role="menu" aria-label="Export chat" ref={menu} onKeyDown={onKeyDown}>
      {ITEMS.map(({ kind, label }) => (
        <button key={kind} type="button" role="menuitem" onClick={() => onPick(kind)}>{label}</button>
      ))}
    </div>
  )
}
