// What a page downloads from the package (issue 17's size budget), measured as a user's page
// sees it: serves the repo's dist/ with the project's server (scripts/serve.mjs: sirv,
// COOP/COEP), opens pages in headless Chromium (playwright-core, /usr/bin/chromium) that
// import the package as native ES modules through an import map (no bundler):
//   train      `{"kiln-dl": "/dist/index.js"}`: init({threads: false}), an MLP built with
//              kiln.nn.sequential, one epoch of kiln.Learner.fit on 256 items, then one
//              learner.trainBatch (the playground's loop), learner.evaluate and model.config;
//   inference  `{"kiln-dl/inference": "/dist/inference.js"}` (the main entry while
//              dist/inference.js or the core engine it loads, dist/kiln-core.*, is not
//              built): init({threads: false}), Tensor.fromData,
//              the same MLP's layers from its spec, SafeTensors bytes loaded into it (written
//              by the page: no training code runs), forward.
// Every response from /dist/ is recorded and compressed on its own with gzip -9 (GNU gzip,
// `gzip -9 -n`; Node's zlib at level 9 where gzip is missing), and the sizes are summed: the
// files are what init() loads (whichever engine and JS modules that is), so the numbers
// follow the package as it changes. Prints one table per page (file, raw, gzip) and writes
// test-output/size.json. The size test (tests/e2e/size.e2e.mjs) checks these numbers.
//   node scripts/size.mjs [--page train|inference] [--json test-output/size.json]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { siteHandler, ISOLATION } from './serve.mjs';

export const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Bytes of `data` compressed with `gzip -9 -n` (or zlib level 9 without gzip on PATH). */
export function gzipSize(data) {
  try {
    return execFileSync('gzip', ['-9', '-n', '-c'], { input: data, maxBuffer: 1 << 30 }).length;
  } catch {
    return gzipSync(data, { level: 9 }).length;
  }
}

// A tiny MLP for both pages: 8 features -> 16 -> 3 classes.
const LAYERS = [
  { type: 'linear', dInput: 8, dOutput: 16 },
  { type: 'relu' },
  { type: 'linear', dInput: 16, dOutput: 3 },
];

const TRAIN_PAGE = `
import { init } from 'kiln-dl';
const kiln = await init({ threads: false });
const model = kiln.nn.sequential({ layers: ${JSON.stringify(LAYERS)} }, { seed: 1 });
const n = 256, x = new Float32Array(n * 8), y = new Int32Array(n);
for (let i = 0; i < n; i++) {
  for (let j = 0; j < 8; j++) x[i * 8 + j] = Math.sin(i * 0.37 + j * 1.3);
  y[i] = i % 3;
}
const data = kiln.data.fromArrays(x, y, { itemShape: [8] });
const optimizer = kiln.optim.adam({ lr: 0.01 });
const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy' });
const history = await learner.fit(data, { epochs: 1, batchSize: 32 });
// The playground's loop (one batch from flat arrays), an evaluation, the architecture as JSON.
learner.trainBatch(x.subarray(0, 32 * 8), y.subarray(0, 32));
learner.evaluate(data);
JSON.stringify(model.config);
const info = kiln.backendInfo();
window.__result = { ok: true, loss: history.loss.at(-1), engine: info.engine ?? null, build: info.build };
`;

// SafeTensors bytes written by hand (header length as u64 LE, JSON header padded to 8 bytes, f32 LE data), so
// the inference page needs no save code: weights w[k] = ((k % 7) - 3) / 8, biases 0.1.
const INFERENCE_PAGE = `
import { init } from 'kiln-dl/inference';
const kiln = await init({ threads: false });
const model = kiln.nn.sequential({ layers: ${JSON.stringify(LAYERS)} });
const tensors = [['0.weight', [16, 8]], ['0.bias', [16]], ['2.weight', [3, 16]], ['2.bias', [3]]];
const header = {};
const values = [];
for (const [name, shape] of tensors) {
  const count = shape.reduce((a, b) => a * b, 1);
  header[name] = { dtype: 'F32', shape, data_offsets: [values.length * 4, (values.length + count) * 4] };
  for (let k = 0; k < count; k++) values.push(name.endsWith('bias') ? 0.1 : ((k % 7) - 3) / 8);
}
let text = JSON.stringify(header);
text += ' '.repeat((8 - (text.length % 8)) % 8); // SafeTensors pads its header with spaces to 8 bytes
const json = new TextEncoder().encode(text);
const bytes = new Uint8Array(8 + json.length + values.length * 4);
new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
bytes.set(json, 8);
new Float32Array(bytes.buffer, 8 + json.length, values.length).set(values);
model.loadSafetensors(bytes);
model.eval();
const input = kiln.Tensor.fromData([[1, 0, 0, 0, 0, 0, 0, 0], [0.5, -0.5, 0.25, 0, 1, 0, -1, 0]]);
const output = model.forward(input);
const out = Array.from(output.dataSync ? output.dataSync() : await output.data());
const info = kiln.backendInfo();
window.__result = { ok: true, output: out, shape: output.shape, engine: info.engine ?? null, build: info.build };
`;

export const PAGES = {
  train: { entry: 'index.js', specifier: 'kiln-dl', script: TRAIN_PAGE },
  // kiln-dl/inference loads the core engine: without it built, the page uses the main entry.
  inference: { entry: 'inference.js', specifier: 'kiln-dl/inference', script: INFERENCE_PAGE, fallback: 'index.js',
    requires: ['inference.js', 'kiln-core-inference.mjs', 'kiln-core-inference.wasm'] },
};

function pageHtml(name, extra = '') {
  const page = PAGES[name];
  const entry = (page.requires ?? [page.entry]).every((f) => existsSync(join(REPO, 'dist', f))) ? page.entry : page.fallback;
  const imports = { [page.specifier]: `/dist/${entry}` };
  return {
    entry,
    html: `<!doctype html><meta charset="utf-8"><title>kiln size: ${name}</title>
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module">
window.addEventListener('error', (e) => { window.__result = { ok: false, error: String(e.message) }; });
window.addEventListener('unhandledrejection', (e) => { window.__result = { ok: false, error: String(e.reason?.stack ?? e.reason) }; });
${extra ? page.script.replace(/\nwindow\.__result = /, `\n${extra}\nwindow.__result = `) : page.script}
</script>`,
  };
}

/**
 * Serves /size/<page>.html (generated) and /dist/ (the repo's, through scripts/serve.mjs's handler);
 * `extra` runs in each page's script before it sets its result (see measure).
 */
function startServer(extra = '') {
  const files = siteHandler(REPO);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const m = /^\/size\/([a-z]+)\.html$/.exec(path);
    if (m && PAGES[m[1]]) {
      res.writeHead(200, { ...ISOLATION, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(pageHtml(m[1], extra).html);
      return;
    }
    if (!path.startsWith('/dist/')) {
      res.writeHead(404, { ...ISOLATION, 'Content-Type': 'text/plain' });
      res.end(`Not found: ${path}\n`);
      return;
    }
    files(req, res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok(server));
  });
}

/**
 * Loads each page in its own fresh browser profile and records what it fetched from /dist/.
 * @param {string[]} names pages to measure (keys of PAGES)
 * @param {{coverage?: boolean}} [options] coverage: also V8's block coverage of every script
 *   the page ran from /dist/ (scripts/split_js.mjs), as `coverage` (Profiler.takePreciseCoverage's
 *   entries: url, functions[].ranges[] of startOffset, endOffset, count); extra: JS run by each
 *   page after its own work and before it sets its result (`kiln` in scope; an error fails the page)
 * @returns {Promise<Record<string, {entry: string, result: object, files: {file: string, raw: number, gzip: number}[], total: {raw: number, gzip: number}}>>}
 * @throws Error if a page fails (its error, a failed request or a console error)
 */
export async function measure(names = Object.keys(PAGES), { coverage = false, extra = '' } = {}) {
  const { launchBrowser } = await import('../tests/e2e/support.mjs');
  const server = await startServer(extra);
  const base = `http://127.0.0.1:${server.address().port}`;
  const out = {};
  try {
    for (const name of names) {
      const { context, close } = await launchBrowser();
      try {
        const page = await context.newPage();
        const bodies = [];
        const problems = [];
        page.on('response', (r) => {
          const url = new URL(r.url());
          if (!url.pathname.startsWith('/dist/')) {
            if (r.status() >= 400 && url.pathname !== '/favicon.ico') problems.push(`${r.status()} ${url.pathname}`);
            return;
          }
          if (r.status() !== 200) problems.push(`${r.status()} ${url.pathname}`);
          else bodies.push(r.body().then((b) => ({ file: url.pathname.slice(1), body: b })));
        });
        page.on('requestfailed', (r) => problems.push(`failed ${r.url()}: ${r.failure()?.errorText}`));
        page.on('console', (m) => {
          // A failed load is reported by the response handler, with its URL.
          if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
        });
        const cdp = coverage ? await context.newCDPSession(page) : null;
        if (cdp) {
          await cdp.send('Profiler.enable');
          await cdp.send('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
        }
        await page.goto(`${base}/size/${name}.html`);
        await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 120_000 });
        const result = await page.evaluate(() => window.__result);
        const scripts = cdp ? (await cdp.send('Profiler.takePreciseCoverage')).result.filter((s) => new URL(s.url || 'about:blank').pathname.startsWith('/dist/')) : null;
        if (!result.ok) throw new Error(`size page ${name}: ${result.error}`);
        if (problems.length) throw new Error(`size page ${name}: ${problems.join('; ')}`);
        const files = (await Promise.all(bodies))
          .map(({ file, body }) => ({ file, raw: body.length, gzip: gzipSize(body) }))
          .sort((a, b) => b.gzip - a.gzip || a.file.localeCompare(b.file));
        const total = files.reduce((t, f) => ({ raw: t.raw + f.raw, gzip: t.gzip + f.gzip }), { raw: 0, gzip: 0 });
        out[name] = { entry: `dist/${pageHtml(name).entry}`, result, files, total, ...(scripts ? { coverage: scripts } : {}) };
      } finally {
        await close();
      }
    }
  } finally {
    server.close();
  }
  return out;
}

/** The table of one page's files (largest gzip first) and its total. */
export function formatTable(name, m) {
  const kb = (n) => (n / 1000).toFixed(1).padStart(9);
  const width = Math.max(28, ...m.files.map((f) => f.file.length));
  const lines = [`${name} page (${m.entry}; engine ${m.result.engine ?? '?'}, build ${m.result.build}): ${m.files.length} files`,
    `  ${'file'.padEnd(width)}  raw (KB)  gzip -9 (KB)`];
  for (const f of m.files) lines.push(`  ${f.file.padEnd(width)}${kb(f.raw)}${kb(f.gzip)}`);
  lines.push(`  ${'total'.padEnd(width)}${kb(m.total.raw)}${kb(m.total.gzip)}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const opt = (flag, dflt) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : dflt);
  const only = opt('--page', null);
  const jsonPath = resolve(opt('--json', join(REPO, 'test-output/size.json')));
  if (only && !PAGES[only]) {
    console.error(`usage: node scripts/size.mjs [--page ${Object.keys(PAGES).join('|')}] [--json file]`);
    process.exit(2);
  }
  if (!existsSync(join(REPO, 'dist/index.js'))) {
    console.error('[size] dist/index.js is missing: run scripts/build.sh first');
    process.exit(1);
  }
  const result = await measure(only ? [only] : Object.keys(PAGES));
  for (const [name, m] of Object.entries(result)) console.log(formatTable(name, m) + '\n');
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, JSON.stringify({ kb: 1000, compression: 'gzip -9 -n, each file on its own', pages: result }, null, 2) + '\n');
  console.log(`[size] wrote ${jsonPath}`);
}
