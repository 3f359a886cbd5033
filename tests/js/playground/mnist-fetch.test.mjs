// MNIST's gzip chunks (web/vite-mnist.js chunkIdx, the build side) and the worker's loader
// (web/src/mnist-fetch.js): a synthetic IDX file is chunked, served by a fake fetch that
// counts requests, and loaded through a fake Cache API (Node has DecompressionStream but
// no Cache API); the loaded items are compared with the original file's bytes.
import { describe, it, expect } from 'vitest';
import { gzipSync } from 'node:zlib';
import { chunkIdx } from '../../../web/vite-mnist.js';
import { MnistLoader, chunksFor, gunzipInto, mb } from '../../../web/src/mnist-fetch.js';
import { describeLoad } from '../../../web/src/mnist-load.js';

const BASE = 'http://test/mnist/';

/** An IDX file of `n` 4 x 4 images (rank 3) with pseudo-random bytes. */
function idxImages(n) {
  const bytes = new Uint8Array(16 + n * 16);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, 0x00000803);
  v.setUint32(4, n);
  v.setUint32(8, 4);
  v.setUint32(12, 4);
  let s = 12345;
  for (let i = 16; i < bytes.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    bytes[i] = (s >>> 16) & 0xff;
  }
  return bytes;
}

function idxLabels(n) {
  const bytes = new Uint8Array(8 + n);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, 0x00000801);
  v.setUint32(4, n);
  for (let i = 0; i < n; i++) bytes[8 + i] = i % 10;
  return bytes;
}

/** A served build: manifest + a fetch that answers the chunks and counts the requests. */
function served(files) {
  const manifest = {};
  const bodies = new Map();
  for (const [name, bytes, per] of files) {
    const { manifest: m, chunks } = chunkIdx(name, bytes, per);
    manifest[name] = m;
    for (const c of chunks) bodies.set(`${BASE}gz/${c.name}`, c.bytes);
  }
  const requests = [];
  const fetch = async (url) => {
    requests.push(url);
    const body = bodies.get(url);
    if (!body) return new Response('missing', { status: 404, statusText: 'Not Found' });
    return new Response(new Uint8Array(body), { headers: { 'Content-Length': String(body.length) } });
  };
  return { manifest, bodies, requests, fetch };
}

/** The Cache API's surface the loader uses, in memory. */
function fakeCaches() {
  const stores = new Map();
  return {
    stores,
    async open(name) {
      if (!stores.has(name)) stores.set(name, new Map());
      const m = stores.get(name);
      return {
        async match(url) {
          const b = m.get(url);
          return b ? new Response(b.slice()) : undefined;
        },
        async put(url, resp) {
          m.set(url, new Uint8Array(await resp.arrayBuffer()));
        },
        async delete(req) {
          return m.delete(typeof req === 'string' ? req : req.url);
        },
        async keys() {
          return [...m.keys()].map((url) => ({ url }));
        },
      };
    },
  };
}

const images = idxImages(2500);
const labels = idxLabels(2500);
const FILES = [
  ['imgs', images, 1000],
  ['lbls', labels, Infinity],
];

describe('chunkIdx (build) and chunksFor', () => {
  it('splits into whole items that unpack to the file', async () => {
    const { manifest, chunks } = chunkIdx('imgs', images, 1000);
    expect(manifest.dims).toEqual([2500, 4, 4]);
    expect(manifest.itemBytes).toBe(16);
    expect(manifest.chunks.map((c) => c.items)).toEqual([1000, 1000, 500]);
    expect(manifest.chunks.map((c) => c.rawBytes)).toEqual([16000, 16000, 8000]);
    expect(chunks.map((c) => c.name)).toEqual(manifest.chunks.map((c) => c.url.slice(3)));
    expect(chunks[0].name).toMatch(/^imgs\.00\.[0-9a-f]{12}\.gz$/);
    const out = new Uint8Array(40000);
    let at = 0;
    for (const [i, c] of chunks.entries()) {
      await gunzipInto(c.bytes, out, at, manifest.chunks[i].rawBytes, c.name);
      at += manifest.chunks[i].rawBytes;
    }
    expect(Buffer.from(out).equals(Buffer.from(images.subarray(16)))).toBe(true);
  });

  it('chunksFor takes the chunks that cover the first n items', () => {
    const { manifest } = chunkIdx('imgs', images, 1000);
    expect(chunksFor(manifest, 1).chunks.length).toBe(1);
    expect(chunksFor(manifest, 1000).chunks.length).toBe(1);
    expect(chunksFor(manifest, 1001).chunks.length).toBe(2);
    const all = chunksFor(manifest, 99999);
    expect(all.count).toBe(2500);
    expect(all.chunks.length).toBe(3);
    expect(all.bytes).toBe(manifest.chunks.reduce((a, c) => a + c.bytes, 0));
    expect(chunksFor(manifest, 0)).toMatchObject({ count: 0, chunks: [], bytes: 0 });
  });
});

describe('MnistLoader', () => {
  it('fetches only the needed chunks, then only the further ones, and keeps them in the cache', async () => {
    const s = served(FILES);
    const caches = fakeCaches();
    const loader = new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches });
    const reports = [];
    const [im, lb] = await loader.load(['imgs', 'lbls'], [1500, 1500], (p) => reports.push(p));
    expect(im.dims).toEqual([1500, 4, 4]);
    expect(Buffer.from(im.data).equals(Buffer.from(images.subarray(16, 16 + 1500 * 16)))).toBe(true);
    expect(Array.from(lb.data)).toEqual(Array.from(labels.subarray(8, 8 + 1500)));
    expect(s.requests.map((u) => u.split('/').pop().split('.').slice(0, 2).join('.'))).toEqual(['imgs.00', 'imgs.01', 'lbls.00']);
    const last = reports.at(-1);
    const want = s.manifest.imgs.chunks[0].bytes + s.manifest.imgs.chunks[1].bytes + s.manifest.lbls.chunks[0].bytes;
    expect(last).toMatchObject({ done: true, total: want, fetched: want, cached: 0, chunks: 3 });
    expect(reports[0]).toMatchObject({ done: false, fetched: 0, total: want });

    // More items: only the third image chunk; fewer: nothing.
    s.requests.length = 0;
    const [im2] = await loader.load(['imgs', 'lbls'], [2500, 2500]);
    expect(s.requests.length).toBe(1);
    expect(s.requests[0]).toContain('imgs.02.');
    expect(Buffer.from(im2.data).equals(Buffer.from(images.subarray(16)))).toBe(true);
    s.requests.length = 0;
    const [im3] = await loader.load(['imgs'], [10]);
    expect(s.requests.length).toBe(0);
    expect(im3.dims).toEqual([10, 4, 4]);

    // A second visit (a new loader, the same Cache API): nothing fetched, all read from the cache.
    const again = new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches });
    let p2;
    const [im4] = await again.load(['imgs', 'lbls'], [2500, 2500], (p) => (p2 = p));
    expect(s.requests.length).toBe(0);
    expect(p2).toMatchObject({ done: true, fetched: 0, cached: p2.total });
    expect(Buffer.from(im4.data).equals(Buffer.from(images.subarray(16)))).toBe(true);
    expect(describeLoad({ ...p2, seconds: 0.2 })).toMatch(/read from this browser's cache in 0\.2 s; nothing downloaded/);
  });

  it('deletes cached chunks of other builds', async () => {
    const s = served(FILES);
    const caches = fakeCaches();
    const c = await caches.open('kiln-mnist-gz-v1');
    await c.put(`${BASE}gz/imgs.00.000000000000.gz`, new Response(new Uint8Array([1, 2, 3])));
    const loader = new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches });
    await loader.load(['imgs'], [10]);
    await new Promise((r) => setTimeout(r, 20));
    const keys = (await c.keys()).map((k) => k.url);
    expect(keys.some((k) => k.includes('000000000000'))).toBe(false);
    expect(keys.length).toBe(1);
  });

  it('works without a Cache API and says so', async () => {
    const s = served(FILES);
    const loader = new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches: null });
    let last;
    await loader.load(['lbls'], [100], (p) => (last = p));
    expect(last.fetched).toBe(s.manifest.lbls.chunks[0].bytes);
    expect(describeLoad({ ...last, seconds: 0.1 })).toMatch(/Not kept for the next visit: this browser gives the page no Cache API here/);
  });

  it('names a missing chunk, a short one and a corrupt one; a corrupt chunk is not kept', async () => {
    const s = served(FILES);
    const caches = fakeCaches();
    const broken = new MnistLoader(s.manifest, `${BASE}nowhere/`, { fetch: s.fetch, caches });
    await expect(broken.load(['lbls'], [10])).rejects.toThrow(/MNIST: http:\/\/test\/mnist\/nowhere\/gz\/lbls\.00\.[0-9a-f]+\.gz answered 404 Not Found/);

    const url = `${BASE}${s.manifest.imgs.chunks[0].url}`;
    const body = s.bodies.get(url);
    s.bodies.set(url, body.subarray(0, 100));
    await expect(new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches }).load(['imgs'], [5])).rejects.toThrow(/sent 100 bytes, the manifest gives \d+/);

    const bad = Uint8Array.from(body, (b) => b ^ 0x5a);
    s.bodies.set(url, bad);
    await expect(new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches }).load(['imgs'], [5])).rejects.toThrow(/imgs\.00\.[0-9a-f]+\.gz is not valid gzip .*It was not kept: Reset fetches it again\./);
    const c = await caches.open('kiln-mnist-gz-v1');
    expect(await c.match(url)).toBeUndefined();

    // gzip of the wrong length (a chunk from another build under this name).
    s.bodies.set(url, gzipSync(new Uint8Array(10)));
    const m2 = structuredClone(s.manifest);
    m2.imgs.chunks[0].bytes = s.bodies.get(url).length;
    await expect(new MnistLoader(m2, BASE, { fetch: s.fetch, caches: null }).load(['imgs'], [5])).rejects.toThrow(/unpacks to 10 bytes, the manifest gives 16000/);

    // The loader goes on after a failure: the repaired chunk loads.
    s.bodies.set(url, body);
    const fine = new MnistLoader(s.manifest, BASE, { fetch: s.fetch, caches });
    const [im] = await fine.load(['imgs'], [5]);
    expect(Buffer.from(im.data).equals(Buffer.from(images.subarray(16, 16 + 80)))).toBe(true);
  });

  it('names an unreachable server and says what to do', async () => {
    const s = served(FILES);
    const down = async () => {
      throw new TypeError('Failed to fetch');
    };
    await expect(new MnistLoader(s.manifest, BASE, { fetch: down, caches: null }).load(['lbls'], [5])).rejects.toThrow(
      /^MNIST: could not download gz\/lbls\.00\.[0-9a-f]+\.gz \(Failed to fetch\)\. Check the connection, then Reset\.$/,
    );
    expect(describeLoad({ failed: true, error: 'MNIST: x', fetched: 0, cached: 0, total: 28236, seconds: 1 })).toBe('MNIST could not be loaded (0.00 MB of 0.03 MB arrived): x');
  });

  it('mb writes megabytes as the page shows them', () => {
    expect(mb(0)).toBe('0.00 MB');
    expect(mb(163437)).toBe('0.16 MB');
    expect(mb(11470044)).toBe('11.5 MB');
  });
});
