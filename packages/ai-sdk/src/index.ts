export { ColloquyChat, type ColloquyChatInit } from './colloquy-chat.js'
export { toUIMessage, toUIPart, fromUIPart, partsFromUIMessage } from './mapping.js'
export { useColloquyChat, type ColloquyChatRefs } from './vue.js'
