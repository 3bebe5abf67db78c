import { alikeSuite } from './alike-suite.js'

alikeSuite('ai-sdk-chat')
