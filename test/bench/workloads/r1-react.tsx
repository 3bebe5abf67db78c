// R1 / R2 (React rendering while streaming). The workload lives in packages/react, where React
// and @colloquy/react resolve; the test package does not depend on them.
export { default } from '../../../packages/react/test/bench/r1-workload.js'
