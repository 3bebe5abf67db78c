// React warns about, and does not flush, updates outside act() unless this is set; vitest does
// not run Testing Library's auto-setup (no globals), so tests import this first.
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
export {}
