// The one tokenizer: what is indexed, what a query looks for, where a snippet highlights and how
// a phrase is checked all come from it, so a word is always cut and folded the same way.

/** A term and where it stands in the original text (UTF-16 offsets, end exclusive). */
export interface Token {
  readonly term: string
  readonly start: number
  readonly end: number
}

// Han, Kana and Hangul are written without spaces: a run of them is cut into overlapping
// character pairs (bigrams), so "東京都" holds 東京 and 京都 and any word a person types, however
// a dictionary would segment it, is found as the pairs it is made of. ー and 々 continue a run.
const CJK_CHAR = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005`
const CJK_RUN = new RegExp(`[${CJK_CHAR}]+`, 'gu')
const CJK_ONE = new RegExp(`^[${CJK_CHAR}]$`, 'u')
/**
 * Words of scripts that put spaces between them: letters, digits and marks, or an emoji sequence
 * (skin tones and VS16 follow a pictograph; an alternation, not a class, keeps each whole).
 */
const WORD =
  /[\p{L}\p{N}\p{M}_]+|\p{Extended_Pictographic}(?:\u200d\p{Extended_Pictographic}|\ufe0f|\p{Emoji_Modifier})*/gu
/** Scripts written without spaces that are not cut into pairs: only a dictionary finds their words. */
const UNSPACED = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/
const SHARP_S = /ß/g
const MARKS = /\p{M}+/gu
/** Longer "words" are hashes, base64 or minified code: nobody types them, and they bloat the index. */
export const MAX_TERM_CHARS = 64

let segmenter: Intl.Segmenter | null | undefined
const wordSegmenter = (): Intl.Segmenter | null =>
  segmenter === undefined
    ? (segmenter =
        typeof Intl.Segmenter === 'function' ? new Intl.Segmenter(undefined, { granularity: 'word' }) : null)
    : segmenter

/**
 * Folds a word for comparison: compatibility forms (ﬁ, full-width letters), case, ß, and combining
 * marks (é is e, Arabic and Hebrew vowel marks drop), so "Café", "CAFE" and "café" are one term.
 */
export function fold(word: string): string {
  // Most words are ASCII: nothing to decompose.
  if (ASCII.test(word)) return word.toLowerCase()
  // ß has no case pair in toLowerCase's sense: "STRASSE" and "Straße" are one word.
  return word.normalize('NFKD').replace(MARKS, '').toLowerCase().replace(SHARP_S, 'ss').normalize('NFC')
}

/** True when `term` is a single Han, Kana or Hangul character (matched as a prefix of the pairs). */
export const isCjkChar = (term: string): boolean => CJK_ONE.test(term)

/** Receives each term with where it stands (`start`, `end`): a token, or a count (`termCounts`). */
type Emit = (term: string, start: number, end: number) => void

function words(text: string, from: number, to: number, emit: Emit): void {
  if (from >= to) return
  const push = (word: string, at: number): void => {
    const term = fold(word)
    if (term && term.length <= MAX_TERM_CHARS) emit(term, at, at + word.length)
  }
  // A Unicode expression cuts words at spaces and punctuation about a hundred times faster than
  // `Intl.Segmenter` (Node 20: 40 against 0.25 million characters a second), and gives the same words wherever words are
  // spaced; the segmenter's dictionary is asked only for runs of Thai, Lao, Khmer or Myanmar.
  const span = text.slice(from, to)
  for (const m of span.matchAll(WORD)) {
    const seg = UNSPACED.test(m[0]) ? wordSegmenter() : null
    if (!seg) push(m[0], from + m.index)
    else for (const s of seg.segment(m[0])) if (s.isWordLike) push(s.segment, from + m.index + s.index)
  }
}

function pairs(text: string, from: number, to: number, emit: Emit): void {
  const chars: number[] = []
  for (let i = from; i < to;) {
    chars.push(i)
    i += text.codePointAt(i)! > 0xffff ? 2 : 1
  }
  chars.push(to)
  const n = chars.length - 1
  if (n === 1) {
    emit(text.slice(from, to).normalize('NFKC'), from, to)
    return
  }
  for (let k = 0; k + 1 < n; k++)
    emit(text.slice(chars[k], chars[k + 2]).normalize('NFKC'), chars[k], chars[k + 2])
}

/**
 * The words of ASCII text (most messages): what the general path gives there, in one pass over
 * the characters without a match object per word. In ASCII, `WORD` matches runs of letters,
 * digits and `_` (no mark, no pictograph, no CJK, nothing unspaced), and folding is lowercasing,
 * which keeps every offset. A test holds the two paths equal.
 */
function asciiWords(text: string, emit: Emit): void {
  const lower = text.toLowerCase()
  let start = -1
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95) {
      if (start < 0) start = i
    } else if (start >= 0) {
      if (i - start <= MAX_TERM_CHARS) emit(lower.slice(start, i), start, i)
      start = -1
    }
  }
}

/** Every term of `text` in order of position, to `emit`. */
function scan(text: string, emit: Emit): void {
  if (ASCII.test(text)) return asciiWords(text, emit)
  let at = 0
  for (const m of text.matchAll(CJK_RUN)) {
    words(text, at, m.index, emit)
    pairs(text, m.index, m.index + m[0].length, emit)
    at = m.index + m[0].length
  }
  words(text, at, text.length, emit)
}

/** The text's terms in order of position. */
export function tokenize(text: string): Token[] {
  const out: Token[] = []
  scan(text, (term, start, end) => out.push({ term, start, end }))
  return out
}

/**
 * The text's terms counted into `counts` (what indexing needs: no token object per word, whose
 * allocation was a large part of a first pass's garbage); returns how many terms it held.
 */
export function termCounts(text: string, counts: Map<string, number>): number {
  let n = 0
  scan(text, (term) => {
    n++
    counts.set(term, (counts.get(term) ?? 0) + 1)
  })
  return n
}

/** The text's terms in order of position, as strings only (what a document is built from). */
export function termList(text: string, out: string[]): string[] {
  scan(text, (term) => void out.push(term))
  return out
}
