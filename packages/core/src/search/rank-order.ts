/** What ranks a hit besides its score. */
export interface RankKey {
  readonly ts: number
  readonly sid: string
  readonly eid: string | null
}

/**
 * The order of hits: relevance first (scores equal to a millionth are ties), then the newer,
 * then by ids (a total order, so two rankings of the same hits agree). A query ranks its
 * candidates with it, and answers from several indexes are merged with it.
 */
export const rankOrder = (aScore: number, a: RankKey, bScore: number, b: RankKey): number =>
  Math.round(bScore * 1e6) - Math.round(aScore * 1e6) ||
  b.ts - a.ts ||
  (a.sid < b.sid ? -1 : a.sid > b.sid ? 1 : 0) ||
  ((a.eid ?? '') < (b.eid ?? '') ? -1 : (a.eid ?? '') > (b.eid ?? '') ? 1 : 0)
