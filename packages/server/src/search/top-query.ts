import {
  docFilter,
  holdsPhrase,
  rankOrder,
  runQuery,
  hitMaker,
  tokenize,
  type Doc,
  type Postings,
  type QueryRun,
  type SearchHit,
  type Token,
} from '@colloquy/core/search'
import { WorkMeter } from '@colloquy/core/wire'

/**
 * Work budgets a query may spend in all, one slice at a time (the event loop taken back between
 * slices): a query whose words are in every one of a million messages reads its rarest word's
 * postings whole, about one budget, and is answered whole; past this many, the best of what was
 * read, `incomplete`.
 */
export const TOP_SLICES = 16

/** Postings read between two looks at the slice's meter (one unit each). */
const STEP = 1024
/** Document lengths below which a term's bound is kept once computed. */
const BOUNDS_BY_LEN = 4096
/** Counts of the rarest term below which its weight is kept once computed (by count and length). */
const DRIVER_TFS = 16
/** Postings of another term per posting of the rarest up to which its largest count is worth reading. */
const COUNT_TF_WITHIN = 4

/** One query term's documents: its lists (one for a word, the kept expansions for a prefix). */
interface Match {
  readonly size: number
  readonly lists: readonly Postings[]
}

interface Candidate {
  readonly doc: Doc
  readonly score: number
}

const order = (a: Candidate, b: Candidate): number => rankOrder(a.score, a.doc, b.score, b.doc)

/**
 * A query over a server's in-memory index (`enableSearch`'s `run`) that answers words held by
 * most messages whole, where core's `runQuery` gives up at its budget: the rarest term's
 * postings are read from the newest document down, and each of the other terms is looked up in
 * its own list by a cursor that only moves down (galloping), not weighed over every document it
 * holds. A document is looked up only when it could still rank in the page: its exact weight
 * for the rarest term plus, for every other term, its weight at the most times any document
 * holds that term (BM25 grows with the count, and the document's length is known) must rank
 * above the `limit`-th best so far. A candidate that would rank has its text read and its
 * phrases checked before it goes in. The answer is the one reading every candidate gives (hits,
 * order, scores: the same weights added in the same order as `runQuery`), the work paid in
 * slices of `budget`, `pause` awaited between them, at most `slices` of them.
 */
export function topQuery(pause: () => Promise<void>, slices = TOP_SLICES): QueryRun {
  return async (index, request, query, source, budget) => {
    if (!query.terms.length) return runQuery(index, request, query, source, budget)
    let meter = new WorkMeter(budget)
    let slicesLeft = slices - 1
    let incomplete = false
    /** Spends `units`, going on in new slices when this one cannot: false once none is left. */
    const spend = async (units: number): Promise<boolean> => {
      for (;;) {
        const now = Math.min(units, meter.remaining)
        meter.take(now)
        units -= now
        if (units === 0) return true
        if (slicesLeft === 0) return false
        await next()
      }
    }
    const next = async (): Promise<void> => {
      slicesLeft--
      await pause()
      meter = new WorkMeter(budget)
    }

    // The matches as `runQuery` makes them and in its order (rarest first, a stable sort): the
    // scores are then the same additions.
    const matches: Match[] = []
    for (const t of query.terms) {
      if (!t.prefix) {
        const list = index.postings(t.term)
        matches.push({ size: list?.df ?? 0, lists: list ? [list] : [] })
      } else {
        // A prefix's words are looked up within one slice's budget, as `runQuery` looks them up.
        if (meter.spent > 0 && slicesLeft > 0) await next()
        const { terms, truncated } = index.prefixTerms(t.term, meter)
        incomplete ||= truncated
        matches.push({ size: terms.reduce((n, l) => Math.max(n, l.df), 0), lists: terms })
      }
    }
    matches.sort((a, b) => a.size - b.size)
    if (matches[0].size === 0) return { hits: [], incomplete }
    const [first, ...rest] = matches

    // For each other term, the most times a document holds it: a document's weight for it is at
    // most its weight at that count (BM25 grows with the count), the rarest word's document count
    // taken for a prefix (BM25 falls as it grows). Counting it reads the term's postings, so it is
    // counted only where it costs at most a few units per posting of the rarest term; elsewhere
    // the count is the document's length (no document holds a term more times than it has terms).
    const bounds: Array<{ tfMax: number; df: number }> = []
    for (const m of rest) {
      let tfMax = Infinity
      let df = Infinity
      let size = 0
      for (const list of m.lists) {
        df = Math.min(df, list.df)
        size += list.n
      }
      if (size <= COUNT_TF_WITHIN * first.size) {
        tfMax = 0
        for (const list of m.lists)
          for (let i = 0; i < list.n; i += STEP) {
            if (!(await spend(Math.min(STEP, list.n - i)))) return { hits: [], incomplete: true }
            for (let k = i, end = Math.min(list.n, i + STEP); k < end; k++)
              if (list.tfs[k] > tfMax) tfMax = list.tfs[k]
          }
      }
      bounds.push({ tfMax, df })
    }
    // Each other term's bound by document length, as computed once (a weight depends on the
    // document only through its length): most documents are turned away on it alone.
    const boundsByLen = rest.map(() => new Float64Array(BOUNDS_BY_LEN).fill(-1))
    const boundOf = (m: number, id: number, len: number): number => {
      const known = len < BOUNDS_BY_LEN ? boundsByLen[m][len] : -1
      if (known >= 0) return known
      const b = index.weight(id, Math.min(bounds[m].tfMax, len), bounds[m].df)
      if (len < BOUNDS_BY_LEN) boundsByLen[m][len] = b
      return b
    }
    // A cursor per list of every other term: the last slot not passed yet (documents are read
    // from the newest id down, so a cursor only moves down).
    const cursors = rest.map((m) => m.lists.map((l) => l.n - 1))
    let probes = 0
    /** Term `m`'s weight in document `id` (the best of its words'), 0 when it holds none; moves its cursors past `id`. */
    const weightIn = (m: number, id: number): number => {
      let w = 0
      const lists = rest[m].lists
      for (let l = 0; l < lists.length; l++) {
        const list = lists[l]
        const { ids } = list
        let hi = cursors[m][l]
        if (hi < 0 || ids[hi] < id) continue
        // Galloping down: the next id is usually near, found in a few doublings.
        let step = 1
        while (hi - step >= 0 && ids[hi - step] > id) {
          hi -= step
          step *= 2
          probes++
        }
        // The first slot of `[hi - step, hi]` whose id is not below `id` (`ids[hi]` is not).
        let lo = Math.max(0, hi - step)
        while (lo < hi) {
          const mid = (lo + hi) >>> 1
          probes++
          if (ids[mid] < id) lo = mid + 1
          else hi = mid
        }
        cursors[m][l] = lo - 1
        if (ids[lo] === id) {
          const v = index.weight(id, list.tfs[lo], list.df)
          if (v > w) w = v
        }
      }
      return w
    }

    const { accepts, onPath } = docFilter(
      index,
      (sid) => source.leaf(sid),
      request,
      (n) => (probes += n),
    )

    // The page so far, best first; with phrases, each member's text as read to check them.
    const best: Candidate[] = []
    const texts = new Map<Candidate, { text: string; tokens: Token[] }>()
    const limit = request.limit
    const ranks = (c: Candidate): boolean => best.length < limit || order(c, best[limit - 1]) < 0
    const insert = (c: Candidate): void => {
      let i = best.length
      while (i > 0 && order(c, best[i - 1]) < 0) i--
      best.splice(i, 0, c)
      if (best.length > limit) texts.delete(best.pop()!)
    }
    /** Candidates that would rank in the page if their text holds the phrases (checked after each step). */
    let pending: Candidate[] = []
    const phrased = query.phrases.length > 0
    const consider = (id: number, w: number): void => {
      const doc = index.doc(id)!
      if (!accepts(doc)) return
      if (best.length === limit) {
        let bound = w
        for (let m = 0; m < bounds.length; m++) bound += boundOf(m, id, doc.len)
        // Ranks after the page's last even at its most (rounding and the sum are monotonic).
        if (rankOrder(bound, doc, best[limit - 1].score, best[limit - 1].doc) > 0) return
      }
      let score = w
      for (let m = 0; m < rest.length; m++) {
        const o = weightIn(m, id)
        if (o === 0) return
        score += o
      }
      if (request.active_path_only && !onPath(doc)) return
      const c = { doc, score }
      if (!ranks(c)) return
      // The page's last only rises as candidates go in: one held back for its text now is at
      // worst one the check turns away then.
      if (phrased) pending.push(c)
      else insert(c)
    }
    /** The held-back candidates whose text holds every phrase, in the page; false once the work ran out. */
    const checkPending = async (): Promise<boolean> => {
      const now = pending
      pending = []
      for (const c of now) {
        if (!ranks(c)) continue
        const text = await source.text(c.doc.sid, c.doc.eid)
        if (text === undefined) continue
        if (!(await spend(text.length))) return false
        const tokens = tokenize(text)
        if (!query.phrases.every((p) => holdsPhrase(tokens, p))) continue
        insert(c)
        texts.set(c, { text, tokens })
      }
      return true
    }

    // The rarest term's documents, newest id first (ties on the score go to the newer message,
    // so once the page is full an older one as good is not looked up); a prefix's words merged
    // by their weights.
    const driver = first.lists.length === 1 ? first.lists[0] : undefined
    let weights: Float64Array | undefined
    if (!driver) {
      weights = new Float64Array(index.idBound)
      for (const list of first.lists)
        for (let i = 0; i < list.n; i += STEP) {
          if (!(await spend(Math.min(STEP, list.n - i)))) return { hits: [], incomplete: true }
          for (let k = i, end = Math.min(list.n, i + STEP); k < end; k++) {
            const id = list.ids[k]
            if (index.doc(id) === undefined) continue
            const w = index.weight(id, list.tfs[k], list.df)
            if (w > weights[id]) weights[id] = w
          }
        }
    }
    // The rarest term's weight by count and length, as computed once (most documents share a few).
    const weightsBy = new Float64Array(driver ? DRIVER_TFS * BOUNDS_BY_LEN : 0).fill(-1)
    const driverWeight = (id: number, tf: number): number => {
      const len = index.doc(id)!.len
      const at = tf < DRIVER_TFS && len < BOUNDS_BY_LEN ? tf * BOUNDS_BY_LEN + len : -1
      if (at >= 0 && weightsBy[at] >= 0) return weightsBy[at]
      const w = index.weight(id, tf, driver!.df)
      if (at >= 0) weightsBy[at] = w
      return w
    }
    let left = driver ? driver.n : weights!.length
    while (left > 0) {
      // A step's postings, a unit per term each (as `runQuery` pays its scan: a posting read is
      // its weight, its bound and a comparison), and the look-ups and path walks the last step made.
      if (!(await spend(Math.min(STEP, left) * matches.length + probes))) {
        incomplete = true
        break
      }
      probes = 0
      for (let k = left - 1, stop = Math.max(0, left - STEP); k >= stop; k--) {
        if (driver) {
          const id = driver.ids[k]
          if (index.doc(id) === undefined) continue
          consider(id, driverWeight(id, driver.tfs[k]))
        } else if (weights![k] > 0) consider(k, weights![k])
      }
      left = Math.max(0, left - STEP)
      if (pending.length && !(await checkPending())) {
        incomplete = true
        break
      }
    }
    // The last step's look-ups, paid (the page is kept either way).
    if (!meter.take(Math.min(probes, meter.remaining))) incomplete = true

    const hitOf = hitMaker(query)
    const hits: SearchHit[] = []
    for (const c of best) {
      let read = texts.get(c)
      if (!read) {
        const text = await source.text(c.doc.sid, c.doc.eid)
        // Gone since (deleted while its session was read): the next best was not kept.
        if (text === undefined) {
          incomplete = true
          continue
        }
        if (!(await spend(text.length))) {
          incomplete = true
          break
        }
        read = { text, tokens: tokenize(text) }
      }
      const { text, tokens } = read
      hits.push(hitOf(c.doc, c.score, onPath(c.doc), text, tokens))
    }
    return { hits, incomplete }
  }
}
