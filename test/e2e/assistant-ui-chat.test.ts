import { frameworkSuite } from './framework-suite.js'

frameworkSuite('assistant-ui-chat')
