import type { Store } from '@colloquy/core'

/**
 * The composer's draft writer, shared by the React and Vue bindings: text is saved after the
 * typist pauses (`delay` ms; set-draft is event-silent and never reorders the list, but there is
 * no point writing every keystroke), chips are saved at once, and a pending save can be flushed
 * (unmount, page hide) or dropped (after sending). Saves run one at a time, in order.
 */
export class DraftSaver {
  private timer: ReturnType<typeof setTimeout> | undefined
  private pendingText: string | undefined
  private chain: Promise<unknown> = Promise.resolve()
  private inFlight = 0

  constructor(
    private readonly store: Store,
    private readonly session_id: string,
    private readonly delay = 400,
    private readonly onError: (error: unknown) => void = () => {},
    /** Called after each save settles (bindings whose text is derived from `busy` re-derive it). */
    private readonly onSettled: () => void = () => {},
  ) {}

  /** True while typed text waits for its save or a save is on its way to the store. */
  get busy(): boolean {
    return this.pendingText !== undefined || this.inFlight > 0
  }

  setText(text: string): void {
    this.pendingText = text
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.flush(), this.delay)
  }

  /** Parks exactly these chips (with the current text) now. */
  setAttachments(attachment_ids: readonly string[], text: string): Promise<void> {
    this.cancelTimer()
    this.pendingText = undefined
    return this.save({ session_id: this.session_id, draft: text, attachment_ids: [...attachment_ids] })
  }

  /** Writes pending text now (chips stay as parked). */
  flush(): Promise<void> {
    this.cancelTimer()
    const text = this.pendingText
    if (text === undefined) return this.chain.then(() => {})
    this.pendingText = undefined
    // set-draft clears the text when `draft` is omitted, so the text always travels.
    return this.save({ session_id: this.session_id, draft: text })
  }

  /** Clears text and chips (a message was sent). */
  clear(): Promise<void> {
    this.cancelTimer()
    this.pendingText = undefined
    return this.save({ session_id: this.session_id, draft: null, attachment_ids: [] })
  }

  /** Drops a pending save without writing it. */
  cancel(): void {
    this.cancelTimer()
    this.pendingText = undefined
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private save(request: Parameters<Store['setDraft']>[0]): Promise<void> {
    this.inFlight++
    const run = this.chain
      .then(() => this.store.setDraft(request))
      .then(
        () => {},
        (e: unknown) => this.onError(e),
      )
      .finally(() => {
        this.inFlight--
        this.onSettled()
      })
    this.chain = run
    return run
  }
}

/** Two composer texts the store keeps as the same draft (blank text is stored as none). */
export const sameDraftText = (a: string, b: string): boolean =>
  a === b || (a.trim() === '' && b.trim() === '')

/**
 * What a composer shows: its own typing while that is unsaved, being saved, or what the store
 * holds; otherwise the stored text (another tab's save, or the draft restored after a reload).
 */
export function shownDraftText(typed: string | undefined, stored: string, saver: DraftSaver | null): string {
  if (typed === undefined) return stored
  return saver?.busy || sameDraftText(typed, stored) ? typed : stored
}
