import { useEffect, useRef, type RefObject } from 'react'
import { followNewest } from '../follow.js'

/** `followNewest` on the two elements these refs get: the scroller and the content inside it. */
export function useFollowNewest<S extends HTMLElement, C extends HTMLElement>(): {
  scroller: RefObject<S | null>
  content: RefObject<C | null>
} {
  const scroller = useRef<S>(null)
  const content = useRef<C>(null)
  useEffect(() => {
    if (scroller.current && content.current) return followNewest(scroller.current, content.current)
  }, [])
  return { scroller, content }
}
