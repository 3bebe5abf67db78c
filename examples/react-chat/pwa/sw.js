// The app shell's service worker. The build fills in SHELL (every file of the build and of
// public/) and VERSION (a hash of them), so each deployment installs a fresh, complete cache.
const VERSION = '__VERSION__'
// eslint-disable-next-line no-undef -- the build replaces this placeholder with the list of files
const SHELL = __SHELL__
const CACHE = `colloquy-shell-${VERSION}`

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  )
})

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(
          keys.filter((k) => k.startsWith('colloquy-shell-') && k !== CACHE).map((k) => caches.delete(k)),
        ),
      )
      .then(() => self.clients.claim()),
  )
})

const indexUrl = () => new URL('index.html', self.registration.scope).href

self.addEventListener('fetch', (event) => {
  const request = event.request
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return
  if (request.mode === 'navigate') {
    // Pages: the network when it answers (a new deployment shows at once), else the cached shell.
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) caches.open(CACHE).then((cache) => cache.put(indexUrl(), response.clone()))
          return response
        })
        .catch(() => caches.match(indexUrl()).then((cached) => cached ?? Response.error())),
    )
    return
  }
  // Everything else is hashed build output or a static file: cache first. ignoreVary, because
  // servers answer with `Vary: Origin` and module scripts send an Origin the precache did not.
  event.respondWith(caches.match(request, { ignoreVary: true }).then((cached) => cached ?? fetch(request)))
})
