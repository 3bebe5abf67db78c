import { replyRecoverySuite } from './reply-recovery-suite.js'

replyRecoverySuite('vue-chat')
