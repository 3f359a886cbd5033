// MNIST as the playground's worker loads it: the gzip chunks listed by the build's
// manifest (virtual:kiln-mnist, made by web/vite-mnist.js), only those that hold the
// items a subset needs, each decompressed with DecompressionStream straight into place,
// and kept (compressed) in the Cache API so the next visit downloads nothing. DOM-free;
// `fetch` and `caches` are injectable for the tests (tests/js/playground/mnist-fetch.test.mjs).

/** The Cache API cache of the chunks (URLs name their content by hash: entries never go stale). */
export const MNIST_CACHE = 'kiln-mnist-gz-v1';

const CONCURRENCY = 6;

/**
 * The chunks of a manifest entry that hold items [0, count), and their sizes.
 * @param {{dims: number[], itemBytes: number, chunks: {url: string, items: number, bytes: number, rawBytes: number}[]}} entry
 * @param {number} count items wanted (clamped to the file's item count)
 * @returns {{count: number, chunks: object[], bytes: number, rawBytes: number}}
 */
export function chunksFor(entry, count) {
  const n = Math.max(0, Math.min(Math.floor(count), entry.dims[0]));
  const chunks = [];
  let covered = 0;
  for (const c of entry.chunks) {
    if (covered >= n) break;
    chunks.push(c);
    covered += c.items;
  }
  return {
    count: n,
    chunks,
    bytes: chunks.reduce((a, c) => a + c.bytes, 0),
    rawBytes: chunks.reduce((a, c) => a + c.rawBytes, 0),
  };
}

/** Megabytes (10⁶ bytes, as browsers' download bars): one decimal from 1 MB (9.8 MB), two below (0.16 MB). */
export const mb = (bytes) => `${(bytes / 1e6).toFixed(bytes < 1e6 ? 2 : 1)} MB`;

/**
 * Decompresses gzip bytes with DecompressionStream into `out` at `offset`.
 * @throws {Error} if the stream is not gzip or does not hold exactly `expected` bytes.
 */
export async function gunzipInto(gz, out, offset, expected, label) {
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  const reader = stream.getReader();
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (n + value.length > expected) throw new Error(`MNIST: ${label} unpacks to more than the ${expected} bytes the manifest gives`);
      out.set(value, offset + n);
      n += value.length;
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    if (e.message?.startsWith('MNIST:')) throw e;
    throw new Error(`MNIST: ${label} is not valid gzip (${e.message.replace(/\.$/, '')}).`);
  }
  if (n !== expected) throw new Error(`MNIST: ${label} unpacks to ${n} bytes, the manifest gives ${expected}`);
}

/** Reads a response body to the end, calling onBytes(n) for each piece received. */
async function readCounting(response, onBytes) {
  const total = Number(response.headers.get('Content-Length')) || 0;
  const reader = response.body.getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
    onBytes(value.length);
  }
  const out = new Uint8Array(total === n ? total : n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Loads subsets of the MNIST IDX files from their gzip chunks. Keeps, per file, the items
 * of the chunks loaded so far in memory, so a larger subset fetches only the further chunks
 * and a smaller one (or the same, after a change of model) fetches nothing.
 */
export class MnistLoader {
  /**
   * @param {object} manifest {[file]: entry} (virtual:kiln-mnist)
   * @param {string} base absolute URL of the served mnist/ folder (ends with '/')
   * @param {{fetch?: typeof fetch, caches?: CacheStorage | null}} [io]
   */
  constructor(manifest, base, io = {}) {
    this.manifest = manifest;
    this.base = base;
    this.fetch = io.fetch ?? ((...a) => fetch(...a));
    this.caches = io.caches === undefined ? (typeof caches !== 'undefined' ? caches : null) : io.caches;
    this.have = new Map(); // file -> {chunks: number loaded, items, data: Uint8Array}
    this.queue = Promise.resolve();
    this.pruned = false;
  }

  /**
   * The first counts[i] items of each file in `files`, as parseIdx gives them:
   * [{dims: [count, ...], data}] (data: a view of count items). Calls
   * onProgress({total, rawTotal, fetched, cached, done, cacheNote, chunks}) as bytes arrive (sizes of the
   * compressed chunks: `fetched` over the network, `cached` read from the Cache API).
   * Loads run one after another.
   */
  load(files, counts, onProgress = () => {}) {
    const job = this.queue.then(() => this.#load(files, counts, onProgress));
    this.queue = job.catch(() => {});
    return job;
  }

  async #openCache() {
    if (!this.caches) return { cache: null, note: 'this browser gives the page no Cache API here' };
    try {
      return { cache: await this.caches.open(MNIST_CACHE), note: '' };
    } catch (e) {
      return { cache: null, note: `the Cache API refused (${e.message})` };
    }
  }

  async #load(files, counts, onProgress) {
    const plans = files.map((file, i) => {
      const entry = this.manifest[file];
      if (!entry) throw new Error(`MNIST: no chunks of ${file} in this build`);
      const plan = chunksFor(entry, counts[i]);
      const have = this.have.get(file);
      const from = have ? Math.min(have.chunks, plan.chunks.length) : 0;
      return { file, entry, plan, from, todo: plan.chunks.slice(from) };
    });
    const progress = { total: 0, rawTotal: 0, fetched: 0, cached: 0, done: false, cacheNote: '', chunks: 0 };
    for (const p of plans) {
      progress.total += p.todo.reduce((a, c) => a + c.bytes, 0);
      progress.rawTotal += p.todo.reduce((a, c) => a + c.rawBytes, 0);
    }
    const needed = plans.some((p) => p.todo.length);
    const { cache, note } = needed ? await this.#openCache() : { cache: null, note: '' };
    progress.cacheNote = note;
    onProgress({ ...progress });

    const tasks = [];
    for (const p of plans) {
      const { entry, plan, from } = p;
      const have = this.have.get(p.file);
      const items = plan.chunks.reduce((a, c) => a + c.items, 0);
      let data = have?.data;
      if (!have || have.items < items) {
        data = new Uint8Array(items * entry.itemBytes);
        if (have) data.set(have.data);
      }
      p.data = data;
      p.items = Math.max(items, have?.items ?? 0);
      let offset = entry.chunks.slice(0, from).reduce((a, c) => a + c.rawBytes, 0);
      for (const c of p.todo) {
        const at = offset;
        offset += c.rawBytes;
        tasks.push(async () => {
          const gz = await this.#chunkBytes(c, cache, progress, onProgress);
          try {
            await gunzipInto(gz, data, at, c.rawBytes, c.url);
          } catch (e) {
            await cache?.delete(this.base + c.url).catch(() => {});
            e.message += ' It was not kept: Reset fetches it again.';
            throw e;
          }
        });
      }
    }
    // CONCURRENCY downloads at a time; each writes its own range of its file's buffer.
    let next = 0;
    const runOne = async () => {
      while (next < tasks.length) await tasks[next++]();
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, tasks.length) }, runOne));

    const out = [];
    for (const p of plans) {
      const loadedChunks = Math.max(p.plan.chunks.length, this.have.get(p.file)?.chunks ?? 0);
      this.have.set(p.file, { chunks: loadedChunks, items: p.items, data: p.data });
      const dims = [p.plan.count, ...p.entry.dims.slice(1)];
      out.push({ dims, data: p.data.subarray(0, p.plan.count * p.entry.itemBytes) });
    }
    progress.done = true;
    onProgress({ ...progress });
    if (cache && !this.pruned) {
      this.pruned = true;
      this.#prune(cache).catch(() => {});
    }
    return out;
  }

  /** One chunk's gzip bytes: from the Cache API if there, else fetched (and stored). */
  async #chunkBytes(c, cache, progress, onProgress) {
    const url = this.base + c.url;
    if (cache) {
      const hit = await cache.match(url).catch(() => undefined);
      if (hit) {
        const gz = new Uint8Array(await hit.arrayBuffer());
        if (gz.length === c.bytes) {
          progress.cached += gz.length;
          progress.chunks++;
          onProgress({ ...progress });
          return gz;
        }
        await cache.delete(url).catch(() => {}); // a partial or foreign entry: fetch again
      }
    }
    let r;
    try {
      r = await this.fetch(url);
    } catch (e) {
      throw new Error(`MNIST: could not download ${c.url} (${e.message}). Check the connection, then Reset.`);
    }
    if (!r.ok) throw new Error(`MNIST: ${url} answered ${r.status} ${r.statusText}`);
    const gz = await readCounting(r, (n) => {
      progress.fetched += n;
      onProgress({ ...progress });
    });
    if (gz.length !== c.bytes) throw new Error(`MNIST: ${url} sent ${gz.length} bytes, the manifest gives ${c.bytes}`);
    progress.chunks++;
    if (cache) {
      try {
        await cache.put(url, new Response(gz, { headers: { 'Content-Type': 'application/gzip', 'Content-Length': String(gz.length) } }));
      } catch (e) {
        progress.cacheNote = `not kept for the next visit (${e.message})`;
      }
    }
    return gz;
  }

  /** Deletes the cached chunks of other builds (URLs not in this manifest). */
  async #prune(cache) {
    const current = new Set();
    for (const entry of Object.values(this.manifest)) for (const c of entry.chunks) current.add(this.base + c.url);
    for (const req of await cache.keys()) if (!current.has(req.url)) await cache.delete(req);
  }
}
