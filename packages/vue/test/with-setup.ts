import type { Store } from '@colloquy/core'
import { mount, type VueWrapper } from '@vue/test-utils'
import { defineComponent, h, type Plugin } from 'vue'
import { createColloquy, type ColloquyOptions } from '../src/index.js'

/**
 * Runs `setup` inside a mounted component (composables need one), with the store plugin; returns
 * what it returned and the wrapper, whose `unmount()` ends the component's scope.
 */
export function withSetup<T>(
  setup: () => T,
  options: ColloquyOptions | Store | null = null,
  plugins: Plugin[] = [],
): { result: T; wrapper: VueWrapper } {
  let result!: T
  const Host = defineComponent({
    setup() {
      result = setup()
      return () => h('div')
    },
  })
  const colloquy = options !== null && 'store' in options ? options : { store: options as Store | null }
  const wrapper = mount(Host, { global: { plugins: [createColloquy(colloquy), ...plugins] } })
  return { result, wrapper }
}
