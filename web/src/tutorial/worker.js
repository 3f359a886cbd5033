// The tutorial's Web Worker: the engine (kiln-dl, single-threaded; or its webgpu backend when
// the reader chose the GPU: `#kiln-backend=webgpu` on the worker's name) and the notebook scope.
// The page (session.js) terminates it on Stop and starts a fresh one.
import { init } from 'kiln-dl';
import { serveNotebook } from './worker_core.js';

// The MNIST files are served next to the playground (../mnist/ from /tutorial/); the page
// passes its own URL so the worker's location does not matter.
const pageUrl = new URL(self.name || '../tutorial/', self.location.href);
// The backend the reader chose (main.js puts `#kiln-backend=webgpu` on the worker's name).
const wantGpu = /(^|[#&])kiln-backend=webgpu(&|$)/.test(pageUrl.hash);
const mnistBase = new URL('../mnist/', pageUrl);
// The tutorial's own files (web/tutorial/assets/, copied to <site>/tutorial/assets/); by
// way of ../tutorial/ so that a page URL without its final slash finds them too.
const assetBase = new URL('../tutorial/assets/', pageUrl);
const MNIST_CACHE = 'kiln-mnist-v1'; // the name sw.js uses

/**
 * Loads the engine; a failure names the file that did not load (the wasm, usually), with
 * Emscripten's last error line when no fetch failed.
 */
async function loadKiln() {
  const failed = [];
  const log = [];
  const realFetch = self.fetch;
  const name = (input) => {
    const href = String(input?.url ?? input);
    try {
      const u = new URL(href, self.location.href);
      return u.origin === self.location.origin ? u.pathname.replace(/^\//, '') : u.href;
    } catch {
      return href;
    }
  };
  self.fetch = (input, opts) =>
    realFetch(input, opts).then(
      (r) => {
        if (!r.ok) failed.push(`${name(input)} (HTTP ${r.status})`);
        return r;
      },
      (e) => {
        failed.push(name(input));
        throw e;
      },
    );
  try {
    // Emscripten's error lines: kept for the message, shown as warnings (not page errors)
    const printErr = (text) => {
      log.push(String(text));
      console.warn(text);
    };
    if (wantGpu) {
      // The GPU (issue 21): kiln-dl's webgpu backend, or the cpu engine with why not.
      try {
        const kiln = await init({ backend: 'webgpu', printErr });
        self.postMessage({ type: 'backend', backend: 'webgpu', adapter: kiln.backendInfo().adapter });
        return kiln;
      } catch (e) {
        self.postMessage({ type: 'backend', backend: 'cpu', adapter: null, error: `${e?.code ? `[${e.code}] ` : ''}${e?.message ?? e}` });
      }
    }
    // The full engine: the tutorial's chapters use convolutions, pools and readers.
    const kiln = await init({ engine: 'full', threads: false, printErr });
    if (!wantGpu) self.postMessage({ type: 'backend', backend: 'cpu', adapter: null });
    // Nearly every chapter calls beyond what init() loads (printing a tensor is the first):
    // fetch the rest of the engine in the background now rather than synchronously in the
    // first cell (a failure surfaces as a KilnError `Io` in the cell that needs it).
    kiln.loadDeferred().catch(() => {});
    return kiln;
  } catch (e) {
    const what = failed.length ? `: ${[...new Set(failed)].join(', ')}` : log.length ? ` (${log.at(-1)})` : '';
    throw new Error(`${e?.message ?? e}${what}`); // e.g. "Failed to fetch: assets/kiln-….wasm"
  } finally {
    self.fetch = realFetch;
  }
}

serveNotebook(
  {
    post: (msg) => self.postMessage(msg),
    listen: (handler) => {
      self.onmessage = (e) => handler(e.data);
    },
  },
  {
    loadKiln,
    // Errors no cell caught (a timer callback's, a rejection nobody awaited): shown under
    // the cell that made them, not left to the console.
    catchErrors: (report) => {
      self.addEventListener('error', (e) => {
        e.preventDefault();
        report(e.error ?? new Error(e.message));
      });
      self.addEventListener('unhandledrejection', (e) => {
        e.preventDefault();
        report(e.reason);
      });
    },
    // asset(name): the network (through the service worker, which precached the assets),
    // else any cache holding it (a worker the service worker does not control, offline).
    fetchAsset: async (name) => {
      const url = new URL(name, assetBase);
      let failure;
      try {
        const r = await fetch(url);
        if (r.ok) return new Uint8Array(await r.arrayBuffer());
        failure = `${url.pathname} answered ${r.status} ${r.statusText}`.trim();
      } catch (e) {
        failure = `${url.pathname}: ${e?.message ?? e}`;
      }
      const hit = self.caches ? await self.caches.match(url, { ignoreVary: true }).catch(() => null) : null;
      if (hit) return new Uint8Array(await hit.arrayBuffer());
      throw new Error(failure);
    },
    fetchMnist: async (file) => {
      const url = new URL(file, mnistBase);
      // The service worker's MNIST cache (sw.js), used here too: a worker started before
      // the service worker took control still stores the files for offline use.
      const cache = self.caches ? await self.caches.open(MNIST_CACHE).catch(() => null) : null;
      // ignoreVary: the file may have been stored by a request with other headers (Origin)
      const hit = await cache?.match(url, { ignoreVary: true });
      if (hit) return new Uint8Array(await hit.arrayBuffer());
      const r = await fetch(url);
      if (!r.ok) throw new Error(`MNIST: ${url} answered ${r.status} ${r.statusText}`);
      if (cache) await cache.put(url, r.clone()).catch(() => {});
      return new Uint8Array(await r.arrayBuffer());
    },
  },
);
