import { createStore, indexedDbStorage } from '@colloquy/core'
import { createChat } from 'chat-kit'
import 'chat-kit/styles.css'
import { createColloquy } from '@colloquy/vue'
import { createApp } from 'vue'
import { App } from './App.js'
import { chatActions } from './data/chat.js'

// Its own database: the Vue and React demos are separate apps that may share an origin.
const store = await createStore({ storage: indexedDbStorage({ name: 'colloquy-vue-demo' }) })
const chat = createChat(store)
void chat.recoverInterrupted().catch(() => {})
createApp(App).use(createColloquy({ store })).use(chatActions(chat)).mount('#root')
