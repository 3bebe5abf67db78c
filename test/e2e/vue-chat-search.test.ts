import { searchSuite } from './search-suite.js'

searchSuite('vue-chat')
