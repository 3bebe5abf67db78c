/** Held while a tab streams a reply into a session (the demo apps use the same name). */
export const replyLock = (session_id: string): string => `colloquy-reply:${session_id}`

/** The status reason of a session whose reply was cut off by its tab closing. */
export const INTERRUPTED_REASON = 'interrupted: the tab writing this reply closed'
