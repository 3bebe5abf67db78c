import { replyRecoverySuite } from './reply-recovery-suite.js'

replyRecoverySuite('react-chat')
