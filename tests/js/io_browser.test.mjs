// kiln.io's IndexedDB and download helpers, and kiln.data.DataLoader with Web Workers, in
// headless Chromium (Debian's /usr/bin/chromium via playwright-core; skipped without it):
// a static server on 127.0.0.1 serves the repo's dist/ and the test fixtures, the page
// imports dist/index.js, and every value is checked here in Node.
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../e2e/support.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

let server;
let browser;
let page;
let origin;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = normalize(join(ROOT, path));
    const allowed = [join(ROOT, 'dist'), join(ROOT, 'tests/js/data_fixtures')].some((d) => file.startsWith(d + '/'));
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>kiln io</title><body></body>');
      return;
    }
    if (!allowed || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`${origin}/`);
  // A string, not a function: Vitest rewrites import() inside test functions.
  await page.evaluate("(async () => { const { init } = await import('/dist/index.js'); window.kiln = await init(); })()");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe.skipIf(!existsSync(CHROMIUM))('in headless Chromium', () => {
  it('saveToIndexedDB / loadFromIndexedDB round-trip a model; raw bytes, list, delete', async () => {
    const got = await page.evaluate(async () => {
      const { kiln } = window;
      const spec = [{ type: 'linear', dInput: 3, dOutput: 2 }, { type: 'tanh' }];
      const a = kiln.nn.sequential(spec, { seed: 1 });
      const b = kiln.nn.sequential(spec, { seed: 2 });
      const x = kiln.Tensor.fromData([[0.5, -1, 2]]);
      const ya = a.forward(x).toArray();
      const before = b.forward(x).toArray();
      await kiln.io.saveToIndexedDB('my-model', a);
      await kiln.io.saveToIndexedDB('raw', Uint8Array.of(1, 2, 3));
      await kiln.io.saveToIndexedDB('raw', Uint8Array.of(4, 5)); // replaces
      const loaded = await kiln.io.loadFromIndexedDB('my-model', b);
      const yb = b.forward(x).toArray();
      const stored = await kiln.io.loadBytesFromIndexedDB('my-model');
      const same = stored.length === a.saveSafetensors().length && stored.every((v, i) => v === a.saveSafetensors()[i]);
      const names = await kiln.io.listIndexedDB();
      const raw = Array.from(await kiln.io.loadBytesFromIndexedDB('raw'));
      await kiln.io.deleteFromIndexedDB('raw');
      const after = await kiln.io.listIndexedDB();
      let missing;
      try {
        await kiln.io.loadFromIndexedDB('raw', b);
      } catch (e) {
        missing = { name: e.name, code: e.code, message: e.message };
      }
      return { ya, before, yb, loadedIsModel: loaded === b, same, names, raw, after, missing };
    });
    expect(got.before).not.toEqual(got.ya);
    expect(got.yb).toEqual(got.ya);
    expect(got.loadedIsModel).toBe(true);
    expect(got.same).toBe(true);
    expect(got.names).toEqual(['my-model', 'raw']);
    expect(got.raw).toEqual([4, 5]);
    expect(got.after).toEqual(['my-model']);
    expect(got.missing).toEqual({
      name: 'KilnError', code: 'Io', message: 'io.loadFromIndexedDB: nothing is stored under "raw" in IndexedDB (database "kiln-dl")',
    });
  });

  it('download offers the bytes as a file', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.evaluate(() => {
        const m = window.kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 1 }], { seed: 3 });
        window.expected = Array.from(m.saveSafetensors());
        window.kiln.io.download('net.safetensors', m);
      }),
    ]);
    expect(download.suggestedFilename()).toBe('net.safetensors');
    const bytes = readFileSync(await download.path());
    expect(Array.from(bytes)).toEqual(await page.evaluate(() => window.expected));
  });

  it('DataLoader with Web Workers: the batches of numWorkers 0, made in workers; errors name the index', async () => {
    const got = await page.evaluate(async (origin) => {
      const { kiln } = window;
      const D = kiln.data;
      const ds = await D.fromModule(`${origin}/tests/js/data_fixtures/browser_datasets.mjs`, { args: [11] });
      const run = async (numWorkers) => {
        const loader = new D.DataLoader(ds, { batchSize: 4, shuffle: true, seed: 42, numWorkers });
        const out = [];
        for await (const b of loader) {
          out.push({ x: b.x.toArray(), worker: b.worker.toArray() });
          kiln.dispose(b);
        }
        return out;
      };
      const local = await run(0);
      const workers = await run(2);
      const failing = await D.fromModule(`${origin}/tests/js/data_fixtures/browser_datasets.mjs`, { export: 'failing', args: [6, 4] });
      let error;
      try {
        for await (const b of new D.DataLoader(failing, { batchSize: 2, numWorkers: 2 })) b.dispose();
      } catch (e) {
        error = { code: e.code, message: e.message, cause: e.cause?.name };
      }
      return { local, workers, error, live: D.DataLoader.liveWorkers(), order: D.permutation(11, 42, 0) };
    }, origin);
    const xs = (r) => r.map((b) => b.x);
    expect(xs(got.workers)).toEqual(xs(got.local));
    expect(got.local[0].x).toEqual(got.order.slice(0, 4).map((i) => [i, -i]));
    expect(got.local.flatMap((b) => b.worker).every((w) => w === 0)).toBe(true);
    expect(got.workers.flatMap((b) => b.worker).every((w) => w === 1)).toBe(true);
    expect(got.error).toEqual({
      code: 'Value', message: "DataLoader: the dataset's get(4) threw TypeError: item 4 is bad (in worker 0, batch 2)", cause: 'TypeError',
    });
    expect(got.live).toBe(0);
  });
});
