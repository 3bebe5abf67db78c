import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Store } from '../../src/index.js'
import { enableSearch, type Search } from '../../src/search/index.js'

// Texts in several scripts, each searched as a person would type it: the hit's snippet must
// highlight exactly the text the query meant.
const SAMPLES: readonly { text: string; query: string; highlighted: string[] }[] = [
  { text: 'Crème brûlée at the CAFÉ', query: 'creme brulee', highlighted: ['Crème', 'brûlée'] },
  { text: 'Crème brûlée at the CAFÉ', query: 'café', highlighted: ['CAFÉ'] },
  { text: 'Die Straße ist ﬁne', query: 'STRASSE fine', highlighted: ['Straße', 'ﬁne'] },
  { text: '東京都に住んでいます', query: '京都', highlighted: ['京都'] },
  { text: '東京都に住んでいます', query: '東', highlighted: ['東京'] },
  { text: '我喜欢用搜索引擎查资料', query: '搜索引擎', highlighted: ['搜索引擎'] },
  { text: 'ソフトウェアを更新する', query: 'ソフト', highlighted: ['ソフト'] },
  { text: '한국어 검색이 됩니다', query: '한국', highlighted: ['한국'] },
  { text: 'launch 🚀 today 👍🏽', query: '🚀', highlighted: ['🚀'] },
  { text: 'launch 🚀 today 👍🏽', query: '👍🏽', highlighted: ['👍🏽'] },
  { text: 'مَرْحَبًا بالعالم', query: 'مرحبا', highlighted: ['مَرْحَبًا'] },
  { text: 'שָׁלוֹם עולם', query: 'שלום', highlighted: ['שָׁלוֹם'] },
  { text: 'ภาษาไทยง่ายนิดเดียว', query: 'ภาษา', highlighted: ['ภาษา'] },
  {
    text: 'How do I open a Postgres cursor?',
    query: '"open a postgres"',
    highlighted: ['open', 'a', 'Postgres'],
  },
  { text: 'How do I open a Postgres cursor?', query: 'postg', highlighted: ['Postgres'] },
]

let store: Store
let search: Search
const ids = new Map<string, string>()

beforeAll(async () => {
  store = await createStore({ storage: memoryStorage(), multiTab: false })
  const { session_id } = await store.create({ title: 'samples' })
  for (const { text } of SAMPLES) {
    if (ids.has(text)) continue
    const { entry_id } = await store.append({
      session_id,
      message: { role: 'user', content: [{ type: 'text', text }], timestamp: 1 },
    })
    ids.set(text, entry_id)
  }
  search = await enableSearch(store)
})
afterAll(async () => {
  search.close()
  await store.close()
})

describe('search in many scripts', () => {
  for (const { text, query, highlighted } of SAMPLES) {
    it(`finds "${text}" by ${query}`, async () => {
      const { hits } = await search.query({ query })
      const hit = hits.find((h) => h.entry_id === ids.get(text))
      expect(hit, `hits: ${JSON.stringify(hits)}`).toBeDefined()
      const marked = hit!.snippet.highlights.map(([a, b]) => hit!.snippet.text.slice(a, b))
      expect(marked).toEqual(highlighted)
    })
  }

  it('does not find a phrase whose words are there in another order', async () => {
    expect((await search.query({ query: '"postgres open"' })).hits).toEqual([])
  })

  it('does not find a CJK word from pairs that are apart', async () => {
    // 京 and 都 pairs exist, 都住 does not: the pairs of "京都住" must stand together.
    expect((await search.query({ query: '京都住' })).hits).toEqual([])
  })
})
