// The harness shared by the playground's end-to-end suites (tests/e2e/playground*.e2e.mjs):
// each suite registers named tests with `test(name, fn)` and calls `run()`, which builds
// web/ (unless --no-build: scripts/test.sh builds once for all suites), serves it with
// `vite preview`, opens one headless Chromium context, runs the tests in order (or only
// those named by --only a,b), fails on any console error of the page or its workers, and
// writes test-output/playground/results-<suite>.json. Screenshots go to test-output/playground/.
//   node tests/e2e/playground-<suite>.e2e.mjs [--no-build] [--only name,name]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, buildApp, startPreview, launchBrowser } from './support.mjs';

export const OUT = join(REPO, 'test-output/playground');
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;

const consoleErrors = [];
const tests = [];

/** The suite's shared state: `base` (the served URL) and `context` (the browser context). */
export const env = { base: '', context: null };

/**
 * Chromium's launch arguments with WebGPU (SwiftShader, headless): support.mjs's plus
 * --enable-unsafe-webgpu, as tests/e2e/webgpu-api.e2e.mjs (the page must be on 127.0.0.1).
 */
export const WEBGPU_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu'];

/** Registers a test; fn returns an optional note (a string) or throws. */
export const test = (name, fn) => tests.push({ name, fn });

export function check(cond, message) {
  if (!cond) throw new Error(message);
}

/** Screenshot test-output/playground/<name>.png. */
export async function shot(page, name, fullPage = true) {
  const path = join(OUT, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

export function watchConsole(page, label) {
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`${label}: console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => consoleErrors.push(`${label}: uncaught: ${err.message}`));
  page.on('worker', (w) => w.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`${label} (worker): console.error: ${msg.text()}`);
  }));
}

/** A new page of the shared context at `url` (relative to the served root: '#data=xor'). */
export async function open(url, label, context = env.context) {
  const page = await context.newPage();
  watchConsole(page, label);
  await page.goto(url.startsWith('http') ? url : `${env.base}${url}`);
  return page;
}

export const status = (page) => page.evaluate(() => document.body.dataset.status);

export async function waitStatus(page, wanted, timeout) {
  try {
    await page.waitForFunction((w) => w.includes(document.body.dataset.status), wanted, { timeout, polling: 100 });
  } catch (e) {
    const text = await page.$eval('#status', (el) => el.textContent).catch(() => '?');
    const msgs = await page.$eval('#messages', (el) => el.textContent).catch(() => '');
    throw new Error(`status did not become ${wanted.join('/')} within ${timeout} ms (now "${await status(page)}": ${text}) ${msgs}`);
  }
}

/** A metric tile's value (data-value), or null. */
export const metric = (page, id) => page.$eval(`#${id}`, (el) => (el.dataset.value === '' || el.dataset.value === undefined ? null : Number(el.dataset.value)));

export async function trainToEnd(page, timeout) {
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#train-btn');
  await waitStatus(page, ['done'], timeout);
  return { testAcc: await metric(page, 'm-test-acc'), testLoss: await metric(page, 'm-test-loss'), trainAcc: await metric(page, 'm-train-acc') };
}

/**
 * Clicks "Download model" and waits for its two files (the SafeTensors weights and the
 * JSON set-up); returns the playwright Downloads.
 */
export async function downloadModel(page) {
  const downloads = [];
  const got = new Promise((resolve) => {
    page.on('download', (d) => {
      downloads.push(d);
      if (downloads.length === 2) resolve();
    });
  });
  await page.click('#save-btn');
  await got;
  return downloads;
}

/** Draws a stroke on the MNIST drawing pad through points in [0, 1]². */
export async function drawStroke(page, points) {
  const box = await page.locator('#draw').boundingBox();
  const at = ([x, y]) => [box.x + x * box.width, box.y + y * box.height];
  await page.mouse.move(...at(points[0]));
  await page.mouse.down();
  for (const p of points.slice(1)) await page.mouse.move(...at(p), { steps: 8 });
  await page.mouse.up();
}

/**
 * Runs the registered tests; exits 1 if any failed. `suite` names the results file;
 * `launchArgs` replaces Chromium's launch arguments (e.g. WEBGPU_ARGS).
 */
export async function run(suite, { viewport = { width: 1400, height: 1000 }, launchArgs } = {}) {
  const results = [];
  mkdirSync(OUT, { recursive: true });
  const t0 = Date.now();
  try {
    if (!args.includes('--no-build')) buildApp('web');
    const server = await startPreview('web');
    env.base = server.url;
    const browser = await launchBrowser({ viewport, acceptDownloads: true, ...(launchArgs ? { args: launchArgs } : {}) });
    env.context = browser.context;
    try {
      for (const t of tests) {
        if (only && !only.includes(t.name)) continue;
        const start = Date.now();
        try {
          const note = await t.fn();
          results.push({ name: t.name, ok: true, note, ms: Date.now() - start });
          console.log(`  ok   ${t.name} (${((Date.now() - start) / 1000).toFixed(1)} s) ${note ?? ''}`);
        } catch (e) {
          results.push({ name: t.name, ok: false, note: e.message, ms: Date.now() - start });
          console.log(`  FAIL ${t.name} (${((Date.now() - start) / 1000).toFixed(1)} s): ${e.message}`);
        }
      }
      const noErrors = consoleErrors.length === 0;
      results.push({ name: 'no-console-errors', ok: noErrors, note: consoleErrors.join('\n') });
      console.log(noErrors ? '  ok   no console errors' : `  FAIL console errors:\n    ${consoleErrors.join('\n    ')}`);
    } finally {
      await browser.close();
      server.stop();
    }
  } catch (e) {
    console.error(e);
    results.push({ name: 'harness', ok: false, note: String(e?.message ?? e) });
  }
  writeFileSync(join(OUT, `results-${suite}.json`), JSON.stringify({ date: new Date().toISOString(), seconds: (Date.now() - t0) / 1000, results }, null, 2));
  const failed = results.filter((r) => !r.ok);
  console.log(`[e2e ${suite}] ${results.length - failed.length}/${results.length} passed in ${((Date.now() - t0) / 1000).toFixed(0)} s; screenshots in ${OUT}`);
  process.exit(failed.length ? 1 : 0);
}
