// R3 (assistant-ui adapter while streaming). The workload lives in packages/assistant-ui, where
// assistant-ui and React resolve; the test package does not depend on them.
export { default } from '../../../packages/assistant-ui/test/bench/r3-workload.js'
