// kiln.data.CsvDataset and SqliteDataset in headless Chromium (Debian's /usr/bin/chromium via
// playwright-core; skipped without it): the page imports dist/index.js; papaparse and
// @sqlite.org/sqlite-wasm resolve through an import map, as a bundler would resolve them
// (papaparse ships CommonJS/UMD only, so its entry is a module that evaluates the UMD
// file, which is what bundlers do). The items must be those Node reads (small.expected.json).
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../e2e/support.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const SMALL = JSON.parse(readFileSync(new URL('../data/tabular/small.expected.json', import.meta.url), 'utf8'));

const PAPA_SHIM = `const text = await (await fetch('/node_modules/papaparse/papaparse.min.js')).text();
const module = { exports: {} };
new Function('module', 'exports', text)(module, module.exports);
export default module.exports;`;
const PAGE = `<!doctype html><title>kiln tabular</title>
<script type="importmap">{"imports": {"papaparse": "/shim/papaparse.mjs",
  "@sqlite.org/sqlite-wasm": "/node_modules/@sqlite.org/sqlite-wasm/index.mjs"}}</script><body></body>`;

let server;
let browser;
let page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (path === '/shim/papaparse.mjs') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(PAPA_SHIM);
    const file = normalize(join(ROOT, path));
    const allowed = ['dist', 'tests/data/tabular', 'node_modules/papaparse', 'node_modules/@sqlite.org/sqlite-wasm']
      .some((d) => file.startsWith(join(ROOT, d) + '/'));
    if (!allowed || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  // A string, not a function: Vitest rewrites import() inside test functions.
  await page.evaluate("(async () => { const { init } = await import('/dist/index.js'); window.kiln = await init(); })()");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe.skipIf(!existsSync(CHROMIUM))('in headless Chromium', () => {
  it('CsvDataset from a fetched stream and SqliteDataset from fetched bytes give the Node items', async () => {
    const got = await page.evaluate(async (options) => {
      const { kiln } = window;
      const plain = (ds) => Array.from({ length: ds.length }, (_, i) => ({ features: Array.from(ds.get(i).features), label: ds.get(i).label }));
      const csv = await kiln.data.CsvDataset.fromStream((await fetch('/tests/data/tabular/small.csv')).body, options);
      const bytes = new Uint8Array(await (await fetch('/tests/data/tabular/small.db')).arrayBuffer());
      const db = await kiln.data.SqliteDataset.fromBytes(bytes, 'flowers', options);
      let error = null;
      try {
        await kiln.data.SqliteDataset.fromBytes(new TextEncoder().encode('x'.repeat(200)), 't');
      } catch (e) {
        error = { code: e.code, message: e.message };
      }
      return { csv: plain(csv), db: plain(db), classes: db.classes, error };
    }, SMALL.options);
    expect(got.csv).toEqual(SMALL.items);
    expect(got.db).toEqual(SMALL.items);
    expect(got.classes).toEqual(SMALL.classes);
    expect(got.error.code).toBe('Format');
    expect(got.error.message).toMatch(/not an SQLite database: it starts with 78 78 78/);
  }, 60_000);
});
