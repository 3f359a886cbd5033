// The site's service worker (web/src/tutorial/sw.js, with the lists web/vite-tutorial.js
// prepends at build time) run in a Node vm with a fake Cache Storage and network: which
// engine builds it precaches, and what it answers when the browser's relaxed-SIMD answer
// changed after it was installed (offline: the cached SIMD128 twin of a relaxed .wasm;
// online: a page visit stores the newly chosen build). The real worker in Chromium:
// tests/e2e/tutorial.e2e.mjs 'offline'.
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';

const TEMPLATE = readFileSync(new URL('../../web/src/tutorial/sw.js', import.meta.url), 'utf8');
const ORIGIN = 'http://127.0.0.1:4173';
const LISTS = {
  PRECACHE: ['./', 'tutorial/', 'assets/index-AAAAAAAA.js', 'assets/kiln-BBBBBBBB.wasm', 'assets/kiln-relaxed-CCCCCCCC.wasm',
    'assets/kiln.deferred-DDDDDDDD.wasm', 'assets/kiln-mt-EEEEEEEE.wasm', 'assets/kiln-mt-relaxed-FFFFFFFF.wasm'],
  LAZY: ['assets/sqlite3-GGGGGGGG.wasm'],
  VARIANTS: [['assets/kiln-BBBBBBBB.wasm', 'assets/kiln-relaxed-CCCCCCCC.wasm'], ['assets/kiln-mt-EEEEEEEE.wasm', 'assets/kiln-mt-relaxed-FFFFFFFF.wasm']],
};
const url = (p) => new URL(p, `${ORIGIN}/`).href;

/** Cache Storage and a network shared by the worker's runs (a browser profile). */
function browser() {
  const stores = new Map();
  const net = { online: true, fetched: [] };
  const key = (r) => (typeof r === 'string' ? r : r.url).split('?')[0];
  const cacheNamed = (name) => {
    if (!stores.has(name)) stores.set(name, new Map());
    const m = stores.get(name);
    return {
      match: async (r) => m.get(key(r)),
      put: async (r, res) => void m.set(key(r), res),
      add: async (r) => m.set(key(r), await net.fetch(r)),
      addAll: async (rs) => { for (const r of rs) m.set(key(r), await net.fetch(r)); },
    };
  };
  net.fetch = async (r) => {
    const u = key(r);
    if (!net.online) throw new TypeError('Failed to fetch');
    net.fetched.push(u);
    return { ok: true, body: `bytes of ${u.slice(ORIGIN.length)}`, clone() { return this; } };
  };
  const caches = {
    open: async (name) => cacheNamed(name),
    keys: async () => [...stores.keys()],
    delete: async (name) => stores.delete(name),
  };
  return { stores, net, caches };
}

/** Starts the worker in `b` with WebAssembly.validate answering `relaxed`; returns its events. */
function startWorker(b, relaxed) {
  const handlers = {};
  const head = Object.entries(LISTS).map(([k, v]) => `const ${k} = ${JSON.stringify(v)};`).join('\n') +
    '\nconst RELAXED_SIMD_PROBE = new Uint8Array([0]);\nconst VERSION = "test";\n';
  const self = {
    location: { href: `${ORIGIN}/sw.js`, origin: ORIGIN },
    addEventListener: (type, fn) => { handlers[type] = fn; },
    skipWaiting: async () => {},
    clients: { claim: async () => {} },
  };
  vm.runInNewContext(head + TEMPLATE, {
    self, caches: b.caches, fetch: b.net.fetch, URL, Promise, Set, Map, Uint8Array, TypeError,
    WebAssembly: { validate: () => relaxed },
    Response: { redirect: (u, s) => ({ redirect: u, status: s }) },
  });
  const extendable = () => {
    const waits = [];
    return { waits, waitUntil: (p) => waits.push(p), done: () => Promise.all(waits) };
  };
  return {
    install: async () => { const e = extendable(); handlers.install(e); await e.done(); },
    /** A GET of `path` as the page would send it; the worker's answer (undefined: not handled). */
    get: async (path, mode = 'cors') => {
      const e = { ...extendable(), request: { method: 'GET', url: url(path), mode }, response: undefined };
      e.respondWith = (p) => { e.response = p; };
      handlers.fetch(e);
      const response = await e.response;
      await e.done();
      return response;
    },
  };
}

const shell = (b) => [...b.stores.get('kiln-shell-test').keys()].map((u) => u.slice(ORIGIN.length + 1)).sort();

describe('the service worker (web/src/tutorial/sw.js)', () => {
  it('precaches the build init() picks of each pair, not its twin nor the lazy files', async () => {
    for (const relaxed of [true, false]) {
      const b = browser();
      await startWorker(b, relaxed).install();
      const [picked, other] = relaxed ? [1, 0] : [0, 1];
      const wasm = shell(b).filter((f) => f.endsWith('.wasm'));
      expect(wasm).toEqual(['assets/kiln.deferred-DDDDDDDD.wasm', ...LISTS.VARIANTS.map((v) => v[picked])].sort());
      for (const v of LISTS.VARIANTS) expect(shell(b)).not.toContain(v[other]);
      expect(shell(b)).not.toContain('assets/sqlite3-GGGGGGGG.wasm');
    }
  });

  it('a twin not precached is stored once a page fetches it, then served offline', async () => {
    const b = browser();
    const sw = startWorker(b, true);
    await sw.install();
    expect((await sw.get('assets/kiln-BBBBBBBB.wasm')).body).toBe('bytes of /assets/kiln-BBBBBBBB.wasm');
    b.net.online = false;
    expect((await sw.get('assets/kiln-BBBBBBBB.wasm')).body).toBe('bytes of /assets/kiln-BBBBBBBB.wasm');
  });

  it('installed without relaxed SIMD, then the browser has it: offline, a relaxed .wasm gets its cached SIMD128 twin', async () => {
    const b = browser();
    await startWorker(b, false).install();
    b.net.online = false;
    const sw = startWorker(b, true); // the worker restarts in the updated browser, same cache
    expect((await sw.get('assets/kiln-mt-relaxed-FFFFFFFF.wasm')).body).toBe('bytes of /assets/kiln-mt-EEEEEEEE.wasm');
    expect((await sw.get('assets/kiln-relaxed-CCCCCCCC.wasm')).body).toBe('bytes of /assets/kiln-BBBBBBBB.wasm');
    // never the other way: a SIMD128 .wasm is not answered with relaxed bytes
    const c = browser();
    await startWorker(c, true).install();
    c.net.online = false;
    await expect(startWorker(c, false).get('assets/kiln-BBBBBBBB.wasm')).rejects.toThrow('Failed to fetch');
  });

  it('online, a page visit stores the builds chosen now when the cache lacks them', async () => {
    const b = browser();
    await startWorker(b, true).install();
    const sw = startWorker(b, false); // relaxed SIMD turned off after the install
    b.net.fetched.length = 0;
    await sw.get('tutorial/', 'navigate');
    expect(b.net.fetched.filter((u) => u.endsWith('.wasm')).sort()).toEqual(LISTS.VARIANTS.map((v) => url(v[0])).sort());
    b.net.online = false;
    expect((await sw.get('assets/kiln-BBBBBBBB.wasm')).body).toBe('bytes of /assets/kiln-BBBBBBBB.wasm');
    // a second visit finds them and fetches no .wasm
    b.net.online = true;
    b.net.fetched.length = 0;
    await sw.get('tutorial/', 'navigate');
    expect(b.net.fetched.filter((u) => u.endsWith('.wasm'))).toEqual([]);
  });
});
