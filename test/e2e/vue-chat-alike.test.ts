import { alikeSuite } from './alike-suite.js'

alikeSuite('vue-chat')
