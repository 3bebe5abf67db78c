/** Deletes every IndexedDB database of the page's origin (all of them are the benchmark's). */
export async function dropDatabases(): Promise<void> {
  const dbs = await indexedDB.databases()
  await Promise.all(dbs.map((d) => (d.name ? deleteDatabase(d.name) : undefined)))
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve) => {
    const r = indexedDB.deleteDatabase(name)
    // A connection some library leaked would block forever: give up after a while.
    const timer = setTimeout(resolve, 5000)
    r.onsuccess = r.onerror = () => {
      clearTimeout(timer)
      resolve()
    }
  })
}
