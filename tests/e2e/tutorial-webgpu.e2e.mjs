// End-to-end test of the tutorial's backend choice (issue 21) in headless Chromium:
//   gpu      with WebGPU (--enable-unsafe-webgpu, SwiftShader, the page on 127.0.0.1) the
//            choice names the adapter; choosing the GPU restarts the notebook on kiln-dl's
//            webgpu backend (the engine line says so, a notice says what changes there); a
//            cell edited to compute a matmul reads it with await t.array() and prints
//            backendInfo().backend "autodiff<webgpu>"; dataSync() there is a KilnError State
//            under the cell; back on the CPU the same cell prints the cpu backend;
//   no-gpu   without the flag the GPU choice is disabled, the reason shown, cells run on the CPU.
// Screenshots in test-output/tutorial/webgpu-*.png. Skips without /usr/bin/chromium.
//   node tests/e2e/tutorial-webgpu.e2e.mjs [--no-build]
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, buildApp, startPreview, launchBrowser } from './support.mjs';

const log = (line) => console.log(`[e2e tutorial-webgpu] ${line}`);
if (!existsSync(process.env.KILN_CHROMIUM ?? '/usr/bin/chromium')) {
  log('skipped: no Chromium');
  process.exit(0);
}
const OUT = join(REPO, 'test-output/tutorial');
mkdirSync(OUT, { recursive: true });
const WEBGPU_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu'];
const failures = [];
const check = (cond, message) => {
  if (!cond) throw new Error(message);
};
const consoleErrors = [];

/** A page of the tutorial in `browser`, its first cell's id. */
async function openTutorial(browser, base, label) {
  const page = await browser.context.newPage();
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${label}: ${m.text()}`));
  page.on('pageerror', (e) => consoleErrors.push(`${label}: uncaught: ${e.message}`));
  page.on('worker', (w) => w.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${label} (worker): ${m.text()}`)));
  await page.goto(`${base}tutorial/`);
  await page.waitForSelector('[data-cell]');
  await page.waitForFunction(() => document.body.dataset.gpu, null, { timeout: 30_000 });
  await page.waitForFunction(() => /ready/.test(document.getElementById('engine-state').textContent), null, { timeout: 120_000 });
  const id = await page.evaluate(() => window.kilnTutorial.cells()[0]);
  return { page, id };
}

/** Replaces cell `id`'s code, runs it, resolves with [status, output text]. */
async function runCode(page, id, code) {
  await page.click(`[data-cell="${id}"] .cm-content`);
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(code);
  await page.click(`[data-cell="${id}"] button.run`);
  await page.waitForFunction((i) => ['ok', 'error'].includes(document.querySelector(`[data-cell="${i}"]`).dataset.status), id, { timeout: 120_000, polling: 100 });
  return [await page.$eval(`[data-cell="${id}"]`, (e) => e.dataset.status), await page.evaluate((i) => window.kilnTutorial.outputText(i), id)];
}

const CELL = "const m = kiln.Tensor.fromData([[1, 2], [3, 4]]);\nprint(await m.matmul(m).array());\nprint(kiln.backendInfo().backend);";

async function testGpu(base) {
  const browser = await launchBrowser({ viewport: { width: 1300, height: 900 }, args: WEBGPU_ARGS });
  try {
    const { page, id } = await openTutorial(browser, base, 'gpu');
    const option = await page.$eval('#backend option[value=webgpu]', (o) => ({ disabled: o.disabled, text: o.textContent }));
    check(!option.disabled && /^GPU \(.*(swiftshader|google).*\)$/i.test(option.text), `the GPU choice: ${JSON.stringify(option)}`);
    await page.selectOption('#backend', 'webgpu');
    await page.waitForFunction(() => /WebGPU on .+ ready/.test(document.getElementById('engine-state').textContent), null, { timeout: 120_000 });
    const notice = await page.$eval('#notice-text', (e) => e.textContent);
    check(/run on the GPU/.test(notice) && /await t\.data\(\)/.test(notice), `the notice: ${notice}`);
    let [status, out] = await runCode(page, id, CELL);
    check(status === 'ok' && /\[\[7,10\],\[15,22\]\]/.test(out.replace(/\s/g, '')) && /autodiff<webgpu>/.test(out), `on the GPU: ${status} ${out}`);
    await page.screenshot({ path: join(OUT, 'webgpu-gpu.png') });
    [status, out] = await runCode(page, id, 'kiln.Tensor.fromData([1, 2]).dataSync();');
    check(status === 'error' && /State/.test(out) && /await tensor\.data\(\)/.test(out), `dataSync on the GPU: ${status} ${out}`);
    await page.selectOption('#backend', 'cpu');
    await page.waitForFunction(() => /WebAssembly\) ready/.test(document.getElementById('engine-state').textContent), null, { timeout: 120_000 });
    [status, out] = await runCode(page, id, CELL);
    check(status === 'ok' && /autodiff<cpu>/.test(out), `back on the CPU: ${status} ${out}`);
    log(`ok   gpu: "${option.text}"; a matmul read with await array() on autodiff<webgpu>; dataSync is State there; back on the CPU`);
  } finally {
    await browser.close();
  }
}

async function testNoGpu(base) {
  const browser = await launchBrowser({ viewport: { width: 1300, height: 900 } });
  try {
    const { page, id } = await openTutorial(browser, base, 'no-gpu');
    const option = await page.$eval('#backend option[value=webgpu]', (o) => ({ disabled: o.disabled, text: o.textContent }));
    const note = await page.$eval('#backend-note', (e) => e.textContent);
    check(option.disabled && /GPU unavailable: .+/.test(note), `without a GPU: ${JSON.stringify(option)}, "${note}"`);
    const [status, out] = await runCode(page, id, CELL);
    check(status === 'ok' && /autodiff<cpu>/.test(out), `on the CPU: ${status} ${out}`);
    await page.screenshot({ path: join(OUT, 'webgpu-no-gpu.png') });
    log(`ok   no-gpu: "${note}"; cells run on the CPU`);
  } finally {
    await browser.close();
  }
}

if (!process.argv.includes('--no-build')) buildApp('web');
const server = await startPreview('web');
try {
  for (const [name, fn] of [['gpu', testGpu], ['no-gpu', testNoGpu]]) {
    try {
      await fn(server.url);
    } catch (e) {
      failures.push(name);
      log(`FAIL ${name}: ${e.message}`);
    }
  }
} finally {
  server.stop();
}
if (consoleErrors.length) {
  failures.push('console');
  log(`FAIL console errors:\n  ${consoleErrors.join('\n  ')}`);
}
log(failures.length ? `${failures.length} failed` : 'all passed');
process.exit(failures.length ? 1 : 0);
