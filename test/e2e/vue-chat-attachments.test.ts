import { attachmentSuite } from './attachment-suite.js'

attachmentSuite('vue-chat')
