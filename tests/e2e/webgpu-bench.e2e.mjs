// Smoke test of the WebGPU benchmark page (bench/webgpu/, issue 21) in headless Chromium with
// WebGPU (SwiftShader): the page builds, loads and, with ?sizes=64&models= (no MNIST), runs
// its SGEMM on every engine (Kiln webgpu, Kiln cpu, TF.js webgpu), each product checked at 64
// entries against a float64 product in JS; the markdown table has the row. No timing is
// checked (only that each engine computed a correct product). Skips (exit 0) without
// /usr/bin/chromium.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const log = (line) => console.log(`[e2e webgpu-bench] ${line}`);

if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
for (const f of ['index.js', 'kiln-webgpu.wasm', 'kiln.wasm']) {
  if (!existsSync(join(repo, 'dist', f))) {
    console.error(`[e2e webgpu-bench] dist/${f} is missing: run scripts/build.sh first`);
    process.exit(1);
  }
}
const { buildApp, checker, launchBrowser, startPreview } = await import('./support.mjs');
const { check, fail, finish } = checker(log);

buildApp('bench/webgpu', { KILN_BENCH_NO_MNIST: '1' }); // SGEMM only: no MNIST files
const server = await startPreview('bench/webgpu');
const browser = await launchBrowser({
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu'],
});
try {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => log(`page error: ${e.message}`));
  await page.goto(`${server.url}?autorun=1&sizes=64&models=&reps=1&minMs=1`);
  await page.waitForFunction(() => window.__benchDone === true, null, { timeout: 120_000 });
  const { results, meta } = await page.evaluate(() => window.__benchResults);
  const md = await page.evaluate(() => window.__benchMarkdown);
  check(/swiftshader/i.test(meta.adapter), `adapter: ${meta.adapter}`);
  for (const engine of ['kiln-webgpu', 'kiln-cpu', 'tfjs-webgpu']) {
    const r = results.sgemm[engine];
    const row = r?.rows?.[0];
    check(r?.ok && row?.ok && row.n === 64 && row.check < 1e-5 && row.gflops > 0,
      `${engine}: n = 64, max rel. error vs float64 ${row?.check?.toExponential(1)} ${r?.ok ? (row?.error ?? '') : r?.error}`);
  }
  check(/\n\| 64 \| [0-9.]+ \(err [^|]+\) \| [0-9.]+ \(err [^|]+\) \| [0-9.]+ \(err [^|]+\) \| [0-9.]+× \| [0-9.]+× \|/.test(md), 'the markdown table has the n = 64 row with both ratios');
} catch (e) {
  fail(e);
} finally {
  await browser.close();
  server.stop();
}
finish();
