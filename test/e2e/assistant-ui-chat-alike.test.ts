import { alikeSuite } from './alike-suite.js'

alikeSuite('assistant-ui-chat')
