/**
 * 64 random bits in base 36: a name no other tab, store or incarnation will draw. From
 * `crypto.getRandomValues`, which pages served over plain http have too (`randomUUID` needs a
 * secure context).
 */
export const randomToken = (): string => {
  const a = crypto.getRandomValues(new Uint32Array(2))
  return a[0].toString(36) + a[1].toString(36)
}
