// End-to-end test of the relaxed-SIMD (FMA) build in Chromium (run by scripts/test.sh after
// scripts/build.sh; `node tests/e2e/relaxed.e2e.mjs`, exit status 0 when every check passed):
// a page imports the package as a user's page does without a bundler (an import map
// {"kiln-dl": "/dist/index.js"}, files served from dist/) and
//   1. init({threads: false}) picks the relaxed build: backendInfo().build 'simd-relaxed',
//      its buildReason, and the page fetched dist/kiln-relaxed.wasm (not kiln.wasm);
//   2. f32x4.relaxed_madd computes a·b + c in this Chromium (a module of its own);
//   3. tests/js/support/relaxed_checks.mjs: products of 8 shapes within γ(k+3)·Σ|a·b| of a
//      double sum on both builds, an MLP SGD step and two convolutions (direct kernels and
//      im2col + GEMM; forward, dx, dw) agreeing with SIMD128 (init({relaxedSimd: false}))
//      within their float32 bounds, and, where the FMA is fused, results that differ from
//      SIMD128's somewhere (so the relaxed kernels really ran);
//   4. init({relaxedSimd: false}) fetches kiln.wasm and reports 'simd'.
// Skips (exit 0) without /usr/bin/chromium.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const log = (line) => console.log(`[e2e relaxed] ${line}`);

if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
for (const f of ['index.js', 'kiln.mjs', 'kiln.wasm', 'kiln-relaxed.wasm', 'kiln-core.mjs', 'kiln-core.wasm', 'kiln-core-relaxed.wasm']) {
  if (!existsSync(join(repo, 'dist', f))) {
    console.error(`[e2e relaxed] dist/${f} is missing: run scripts/build.sh first`);
    process.exit(1);
  }
}
const { checker, launchBrowser, openWasmPage, startStaticServer } = await import('./support.mjs');

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>kiln relaxed e2e</title>
<script type="importmap">{"imports": {"kiln-dl": "/dist/index.js"}}</script></head><body>
<script type="module">
import { init } from 'kiln-dl';
import { compareBuilds } from '/tests/js/support/relaxed_checks.mjs';
window.kilnInit = init;
window.compare = () => compareBuilds(init);
window.infoOf = async (opts) => (await init(opts)).backendInfo();
window.ready = true;
</script></body></html>`;

const server = await startStaticServer({ '/': ['text/html', PAGE] }, ['/dist/', '/tests/js/support/relaxed_checks.mjs']);
const { url } = server;

const { check, fail, finish } = checker(log);

const browser = await launchBrowser();
try {
  const { page, wasm } = await openWasmPage(browser, url, log);

  // The default engine is the core one (kiln-core*.wasm); the full one has its own pair.
  const auto = await page.evaluate(() => window.infoOf({ threads: false }));
  check(auto.build === 'simd-relaxed' && auto.threads === 1 && auto.engine === 'core' && /^relaxed SIMD: /.test(auto.buildReason),
        `init({threads: false}): ${auto.engine} ${auto.build}, "${auto.buildReason}"`);
  check(wasm.length === 1 && wasm[0] === 'kiln-core-relaxed.wasm', `fetched ${wasm.join(', ')}`);
  wasm.length = 0;
  const simd = await page.evaluate(() => window.infoOf({ threads: false, relaxedSimd: false }));
  check(simd.build === 'simd' && wasm[0] === 'kiln-core.wasm', `init({relaxedSimd: false}): ${simd.build} from ${wasm.join(', ')}`);
  wasm.length = 0;
  const fullAuto = await page.evaluate(() => window.infoOf({ engine: 'full', threads: false }));
  check(fullAuto.build === 'simd-relaxed' && fullAuto.engine === 'full' && wasm[0] === 'kiln-relaxed.wasm',
        `init({engine: 'full', threads: false}): ${fullAuto.build} from ${wasm.join(', ')}`);
  wasm.length = 0;
  const fullSimd = await page.evaluate(() => window.infoOf({ engine: 'full', threads: false, relaxedSimd: false }));
  check(fullSimd.build === 'simd' && wasm[0] === 'kiln.wasm', `init({engine: 'full', relaxedSimd: false}): ${fullSimd.build} from ${wasm.join(', ')}`);

  const s = await page.evaluate(() => window.compare());
  check(s.madd?.value === 11, `f32x4.relaxed_madd(2, 3, 5) = ${s.madd?.value} (a·b + c), fused: ${s.madd?.fused}`);
  check(s.infos[0].build === 'simd-relaxed' && s.infos[1].build === 'simd', 'compared builds: simd-relaxed vs simd');
  for (const row of s.gemm) {
    check(row.relaxed <= 1 && row.simd <= 1,
          `GEMM ${row.shape.join(' x ')}: worst error / bound relaxed ${row.relaxed.toFixed(3)}, simd ${row.simd.toFixed(3)}; ${row.differ} of ${row.size} entries differ`);
  }
  const { mlp } = s;
  check(Math.abs(mlp.relaxed.after - mlp.simd.after) <= 1e-5 * Math.abs(mlp.simd.after) && mlp.simd.after < mlp.simd.before &&
        mlp.worstOutput <= 1e-5 * Math.max(1, mlp.maxOutput),
        `MLP SGD step: loss ${mlp.simd.before.toFixed(6)} -> relaxed ${mlp.relaxed.after.toFixed(7)} / simd ${mlp.simd.after.toFixed(7)}, outputs within ${mlp.worstOutput.toExponential(2)}`);
  for (const row of s.conv) {
    check(row.worst <= 1, `conv ${row.name}: worst difference / bound ${row.worst.toFixed(3)}; ${row.differ} of ${row.size} values differ`);
  }
  if (s.madd?.fused) {
    const differ = s.gemm.reduce((n, r) => n + r.differ, 0) + s.conv.reduce((n, r) => n + r.differ, 0);
    check(differ > 0, `the fused FMA changed ${differ} results' last bits (the relaxed kernels ran)`);
  }
} catch (e) {
  fail(e);
} finally {
  await browser.close();
  server.close();
}
finish();
