// "Encrypt my chats": whether this browser's chats are encrypted is kept in localStorage (a flag,
// never the passphrase), so the app asks for the passphrase before it opens the store.
const FLAG = 'colloquy-demo:encrypted'

export const chatsEncrypted = (): boolean => localStorage.getItem(FLAG) === '1'
export const markChatsEncrypted = (): void => localStorage.setItem(FLAG, '1')

/** A passphrase the demo accepts: long enough to be worth 600,000 rounds of PBKDF2. */
export const MIN_PASSPHRASE = 8
