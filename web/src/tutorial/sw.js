// The service worker of the site (template: web/vite-tutorial.js prepends PRECACHE, the
// built files; LAZY; VARIANTS, the engines' [SIMD128, relaxed] .wasm pairs; the
// RELAXED_SIMD_PROBE module of kiln-dl's select.ts; and VERSION, a hash of their contents). After the first visit the pages,
// the engine (JS + wasm) and the MNIST files work offline:
// - install: precache the app shell (HTML, JS chunks, CSS, wasm) of this build; of each
//   engine's SIMD128 / relaxed-SIMD pair (VARIANTS) only the .wasm kiln-dl's init() picks in
//   this browser (WebAssembly.validate of RELAXED_SIMD_PROBE, as select.ts), the other is
//   cached like a LAZY file if a page fetches it (init({ relaxedSimd: false }));
// - HTML (navigations): network first, the cached copy when offline; `/tutorial` (no
//   slash) is redirected to `/tutorial/` when offline;
// - other precached files (hashed names): cache first;
// - LAZY files (libraries kiln-dl imports on first use, e.g. sqlite-wasm): not precached,
//   cache first once a page has fetched them;
// - /mnist/<file>: cache first, stored the first time it is fetched (the tutorial page
//   fetches the files in the background after its first visit: main.js).
// Cache lookups ignore Vary: the precached copy was fetched without the `Origin` header a
// page's `crossorigin` module request sends, and `vite preview` answers `Vary: Origin`.
/* global PRECACHE, LAZY, VARIANTS, RELAXED_SIMD_PROBE, VERSION */
const SHELL = `kiln-shell-${VERSION}`;
const DATA = 'kiln-mnist-v1';
const scopeUrl = new URL('./', self.location.href);
let relaxed = false;
try {
  relaxed = WebAssembly.validate(RELAXED_SIMD_PROBE) === true;
} catch {
  // no WebAssembly or a throwing validate: init() falls back to SIMD128 too
}
const href = (p) => new URL(p, scopeUrl).href;
const unused = new Set(VARIANTS.map(([simd128, fma]) => (relaxed ? simd128 : fma)));
const shellUrls = new Set(PRECACHE.filter((p) => !unused.has(p)).map(href));
const lazyUrls = new Set([...LAZY, ...unused].map(href));
// The answer above can change under an installed worker (a browser update ships relaxed
// SIMD, a flag turns it off) while the cache still holds the other build of each pair:
// - offline, a relaxed .wasm that was never cached is answered with its cached SIMD128
//   twin (same glue, same deferred half; every engine with relaxed SIMD runs SIMD128);
// - online, each page visit stores the builds chosen now if they are missing (topUp).
const simd128Twin = new Map(VARIANTS.map(([simd128, fma]) => [href(fma), href(simd128)]));
const chosen = VARIANTS.map(([simd128, fma]) => href(relaxed ? fma : simd128));

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then((cache) => cache.addAll([...shellUrls]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('kiln-shell-') && k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

async function networkFirst(request, key) {
  const cache = await caches.open(SHELL);
  try {
    const response = await fetch(request);
    if (response.ok) cache.put(key, response.clone());
    return response;
  } catch (e) {
    const hit = await cache.match(key, { ignoreVary: true });
    if (hit) return hit;
    throw e;
  }
}

async function cacheFirst(request, cacheName, key) {
  const cache = await caches.open(cacheName);
  const hit = await cache.match(request, { ignoreSearch: true, ignoreVary: true });
  if (hit) return hit;
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(request, response.clone());
    return response;
  } catch (e) {
    const twin = simd128Twin.has(key) && (await cache.match(simd128Twin.get(key), { ignoreVary: true }));
    if (twin) return twin;
    throw e;
  }
}

/** Stores the chosen build of each pair if the cache lacks it (after the answer changed). */
async function topUp() {
  const cache = await caches.open(SHELL);
  for (const url of chosen) {
    if (!(await cache.match(url, { ignoreVary: true }))) await cache.add(url).catch(() => {});
  }
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  const path = url.pathname;
  if (/\/mnist\/[a-z0-9-]+$/.test(path)) {
    event.respondWith(cacheFirst(request, DATA));
    return;
  }
  const key = url.origin + url.pathname;
  if (request.mode === 'navigate' || path.endsWith('/') || path.endsWith('.html')) {
    const page = path.endsWith('/index.html') ? key.replace(/index\.html$/, '') : key;
    if (shellUrls.has(page)) {
      event.respondWith(networkFirst(request, page));
      event.waitUntil(topUp());
    }
    else if (shellUrls.has(`${key}/`)) event.respondWith(fetch(request).catch(() => Response.redirect(`${key}/${url.search}`, 302)));
    return;
  }
  if (shellUrls.has(key) || lazyUrls.has(key)) event.respondWith(cacheFirst(request, SHELL, key));
});
