// "Encrypt my chats": whether this browser's chats are encrypted is kept in localStorage (a flag,
// never the passphrase), so the app asks for the passphrase before it opens the store.
const FLAG = 'colloquy-demo:encrypted'

export const chatsEncrypted = (): boolean => localStorage.getItem(FLAG) === '1'
export const markChatsEncrypted = (): void => localStorage.setItem(FLAG, '1')

/** "Lock after": minutes without use before encrypted chats lock (0: never), read when the store opens. */
const LOCK_AFTER = 'colloquy-demo:lock-after'
export const lockAfterMinutes = (): number => Number(localStorage.getItem(LOCK_AFTER)) || 0
export const setLockAfterMinutes = (minutes: number): void =>
  localStorage.setItem(LOCK_AFTER, String(minutes))

/** A passphrase the demo accepts: long enough to be worth 600,000 rounds of PBKDF2. */
export const MIN_PASSPHRASE = 8
