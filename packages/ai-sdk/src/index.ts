export { ColloquyChat, type ColloquyChatInit } from './colloquy-chat.js'
// A new session for a chat (with the hidden root entry that lets a first message get edited siblings).
export { createThread } from '@colloquy/parts'
export { toUIMessage, partsFromUIMessage } from './mapping.js'
// The Vue binding is its own entry point, `@colloquy/ai-sdk/vue`: re-exported here it would make
// every React app's bundler resolve `vue`, an optional peer dependency.
