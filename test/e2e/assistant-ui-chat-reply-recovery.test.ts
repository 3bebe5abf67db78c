import { replyRecoverySuite } from './reply-recovery-suite.js'

replyRecoverySuite('assistant-ui-chat')
