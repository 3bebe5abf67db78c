import { alikeSuite } from './alike-suite.js'

alikeSuite('react-chat')
