import { attachmentSuite } from './attachment-suite.js'

attachmentSuite('react-chat')
