export { ColloquyChat, type ColloquyChatInit } from './colloquy-chat.js'
export { toUIMessage, toUIPart, fromUIPart, partsFromUIMessage } from './mapping.js'
// The Vue binding is its own entry point, `@colloquy/ai-sdk/vue`: re-exported here it would make
// every React app's bundler resolve `vue`, an optional peer dependency.
