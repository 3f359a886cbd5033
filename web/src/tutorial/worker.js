// The tutorial's Web Worker: the engine (kiln-dl, single-threaded) and the notebook scope.
// The page (session.js) terminates it on Stop and starts a fresh one.
import { init } from 'kiln-dl';
import { serveNotebook } from './worker_core.js';

// The MNIST files are served next to the playground (../mnist/ from /tutorial/); the page
// passes its own URL so the worker's location does not matter.
const pageUrl = new URL(self.name || '../tutorial/', self.location.href);
const mnistBase = new URL('../mnist/', pageUrl);
const MNIST_CACHE = 'kiln-mnist-v1'; // the name sw.js uses

serveNotebook(
  {
    post: (msg) => self.postMessage(msg),
    listen: (handler) => {
      self.onmessage = (e) => handler(e.data);
    },
  },
  {
    loadKiln: () => init({ threads: false }),
    fetchMnist: async (file) => {
      const url = new URL(file, mnistBase);
      // The service worker's MNIST cache (sw.js), used here too: a worker started before
      // the service worker took control still stores the files for offline use.
      const cache = self.caches ? await self.caches.open(MNIST_CACHE).catch(() => null) : null;
      const hit = await cache?.match(url);
      if (hit) return new Uint8Array(await hit.arrayBuffer());
      const r = await fetch(url);
      if (!r.ok) throw new Error(`MNIST: ${url} answered ${r.status} ${r.statusText}`);
      if (cache) await cache.put(url, r.clone()).catch(() => {});
      return new Uint8Array(await r.arrayBuffer());
    },
  },
);
