// R3 (AI SDK adapter while streaming). The workload lives in packages/ai-sdk, where the SDK and
// React resolve; the test package does not depend on them.
export { default } from '../../../packages/ai-sdk/test/bench/r3-workload.js'
