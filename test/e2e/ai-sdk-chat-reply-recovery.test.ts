import { replyRecoverySuite } from './reply-recovery-suite.js'

replyRecoverySuite('ai-sdk-chat')
