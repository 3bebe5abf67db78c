import { describe, expect, it } from 'vitest'
import { queryKey } from '../src/query-key.js'

describe('queryKey', () => {
  it('is the same for equal values whatever the key order', () => {
    expect(queryKey('m', [{ session_id: 's', roles: ['user'], nested: { b: 1, a: 2 } }])).toBe(
      queryKey('m', [{ nested: { a: 2, b: 1 }, roles: ['user'], session_id: 's' }]),
    )
  })

  it('differs for different values, names and array orders', () => {
    expect(queryKey('m', [{ session_id: 's' }])).not.toBe(queryKey('m', [{ session_id: 't' }]))
    expect(queryKey('m', ['s'])).not.toBe(queryKey('n', ['s']))
    expect(queryKey('m', [['user', 'assistant']])).not.toBe(queryKey('m', [['assistant', 'user']]))
  })

  it('treats an absent key and an undefined one alike', () => {
    expect(queryKey('m', [{ session_id: 's', roles: undefined }])).toBe(queryKey('m', [{ session_id: 's' }]))
  })
})
