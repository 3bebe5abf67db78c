import { frameworkSuite } from './framework-suite.js'

frameworkSuite('ai-sdk-chat')
