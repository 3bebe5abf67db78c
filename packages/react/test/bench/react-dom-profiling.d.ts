// react-dom ships `react-dom/profiling` (the client renderer with React.Profiler timing kept in
// production builds) but @types/react-dom has no entry for it; it exports what the client does.
declare module 'react-dom/profiling' {
  export { createRoot, hydrateRoot } from 'react-dom/client'
}
