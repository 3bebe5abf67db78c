/** How close to the bottom (in pixels) still counts as "at the bottom". */
const NEAR = 48

/**
 * Keeps the newest message in view: `scroller` starts at the bottom and stays there as
 * `content` grows (a streamed token, a new message, a message of another tab) or the scroller
 * itself shrinks, unless the reader has scrolled up, in which case the scroll position is left
 * alone until they come back down.
 * Every app's transcript uses this one rule. Returns the function that stops following.
 */
export function followNewest(scroller: HTMLElement, content: HTMLElement): () => void {
  let atBottom = true
  let last = 0
  const toBottom = (): void => {
    scroller.scrollTop = scroller.scrollHeight
  }
  const onScroll = (): void => {
    const top = scroller.scrollTop
    // Reaching the bottom follows again; only a move up stops following. A scroll event can
    // arrive after the content grew under it (a whole message from another tab), so being far
    // from the bottom after a move down is not the reader leaving it.
    if (scroller.scrollHeight - top - scroller.clientHeight < NEAR) atBottom = true
    else if (top < last - 1) atBottom = false
    last = top
  }
  // Rows re-render on their own as tokens arrive, so the content's size is watched, not renders;
  // and so is the scroller's own: a smaller window or a taller composer shrinks the transcript
  // area with no change to its content, which would leave the newest message below the fold.
  const observer = new ResizeObserver(() => {
    if (atBottom) toBottom()
  })
  scroller.addEventListener('scroll', onScroll, { passive: true })
  observer.observe(content)
  observer.observe(scroller)
  toBottom()
  return () => {
    scroller.removeEventListener('scroll', onScroll)
    observer.disconnect()
  }
}
