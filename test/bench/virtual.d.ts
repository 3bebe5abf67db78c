/** The sample transcripts' texts, built into the page by the runner (`run.mjs`, SEARCH_IDB). */
declare module 'virtual:bench-search-samples' {
  const texts: string[]
  export default texts
}
