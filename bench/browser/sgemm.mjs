// Browser benchmark: SGEMM C = A·B (n x n, float32) in headless Chromium, one thread, in one
// page: Kiln's relaxed-SIMD build (dist/kiln-relaxed.wasm, f32x4.relaxed_madd: FMA),
// Kiln's SIMD128 build (dist/kiln.wasm, mul + add) and TF.js 4.22's WASM backend (SIMD, no
// threads: the page is not cross-origin isolated, so neither engine can start threads).
//
//   node bench/browser/sgemm.mjs [--reps N] [--sizes 128,256,512,1024] [--min-seconds S]
//
// Threads: 1 for every engine (Kiln init({threads: false}); TF.js without
// SharedArrayBuffer loads tfjs-backend-wasm-simd.wasm, which has no threads). The page runs
// on the renderer's main thread; CPU time is the utime + stime of that thread (read from
// /proc around each timed block), which the machine's other
// load does not inflate; wall time is the page's performance.now(). Engines are
// interleaved block by block (relaxed, simd, tfjs, relaxed, ...) so that they see the same
// load; each block runs products for at least --min-seconds (default 0.5) after a warm-up
// (V8 tiers wasm up after a few calls). GFLOP/s = 2·n³ / time per product; medians of the
// --reps blocks (default 5). Products are checked against each other before timing.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, launchBrowser } from '../../tests/e2e/support.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const reps = Number(opt('--reps', 5));
const sizes = opt('--sizes', '128,256,512,1024').split(',').map(Number);
const minSeconds = Number(opt('--min-seconds', 0.5));
const ENGINES = ['relaxed', 'simd', 'tfjs'];

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>Kiln SGEMM: relaxed SIMD vs SIMD128 vs TF.js</title>
<script type="importmap">{"imports": {"kiln-dl": "/dist/index.js"}}</script>
<script src="/node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js"></script>
<script src="/node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js"></script>
</head><body><pre id="out"></pre><script type="module">
import { init } from 'kiln-dl';
const relaxed = await init({ threads: false, relaxedSimd: true });
const simd = await init({ threads: false, relaxedSimd: false });
tf.wasm.setWasmPaths('/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
await tf.setBackend('wasm');
await tf.ready();
const operands = {};
function randomArray(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; out[i] = s / 2 ** 32 - 0.5; }
  return out;
}
window.prepare = (n) => {
  const a = randomArray(n * n, 1 + n), b = randomArray(n * n, 2 + n);
  const ops = {
    relaxed: [relaxed.Tensor.fromData(a, { shape: [n, n] }), relaxed.Tensor.fromData(b, { shape: [n, n] })],
    simd: [simd.Tensor.fromData(a, { shape: [n, n] }), simd.Tensor.fromData(b, { shape: [n, n] })],
    tfjs: [tf.tensor2d(a, [n, n]), tf.tensor2d(b, [n, n])],
  };
  operands[n] = ops;
  const r = ops.relaxed[0].matmul(ops.relaxed[1]), s = ops.simd[0].matmul(ops.simd[1]), t = tf.matMul(ops.tfjs[0], ops.tfjs[1]);
  const rd = r.dataSync(), sd = s.dataSync(), td = t.dataSync();
  let scale = 0, dRs = 0, dRt = 0;
  for (let i = 0; i < rd.length; i++) {
    scale = Math.max(scale, Math.abs(sd[i]));
    dRs = Math.max(dRs, Math.abs(rd[i] - sd[i]));
    dRt = Math.max(dRt, Math.abs(rd[i] - td[i]));
  }
  r.dispose(); s.dispose(); t.dispose();
  return { relVsSimd: dRs / scale, relVsTfjs: dRt / scale };
};
const product = {
  relaxed: (n) => { const [a, b] = operands[n].relaxed; a.matmul(b).dispose(); },
  simd: (n) => { const [a, b] = operands[n].simd; a.matmul(b).dispose(); },
  // TF.js's WASM kernels run synchronously inside matMul.
  tfjs: (n) => { const [a, b] = operands[n].tfjs; tf.matMul(a, b).dispose(); },
};
/** Runs products for at least ms milliseconds (and 3 calls); returns calls and wall ms. */
window.block = (engine, n, ms) => {
  const t0 = performance.now();
  let calls = 0;
  while (calls < 3 || performance.now() - t0 < ms) { product[engine](n); calls++; }
  return { calls, wall: performance.now() - t0 };
};
window.info = {
  relaxed: relaxed.backendInfo(), simd: simd.backendInfo(),
  tfjs: { version: tf.version_core, backend: tf.getBackend(), simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
          threads: tf.wasm.getThreadsCount ? tf.wasm.getThreadsCount() : 1, crossOriginIsolated: globalThis.crossOriginIsolated === true },
};
window.ready = true;
</script></body></html>`;

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
const ALLOWED = ['/dist/', '/node_modules/@tensorflow/tfjs-core/dist/', '/node_modules/@tensorflow/tfjs-backend-wasm/dist/'];
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  if (!ALLOWED.some((p) => path.startsWith(p))) return void res.writeHead(404).end();
  try {
    res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(readFileSync(join(REPO, path)));
  } catch {
    res.writeHead(404).end();
  }
});

/**
 * utime + stime (s) of the main threads of this browser's renderer processes (--type=renderer;
 * Debian's headless Chromium names them "chromium", not CrRendererMain): where the page's
 * JavaScript and WebAssembly run.
 */
function rendererCpu(profile) {
  const procs = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      procs.push({ pid: Number(d), ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8') });
    } catch {
      // exited
    }
  }
  const mine = new Set(procs.filter((p) => p.cmd.includes(profile)).map((p) => p.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!mine.has(p.pid) && mine.has(p.ppid)) { mine.add(p.pid); grew = true; }
  }
  let total = 0;
  for (const p of procs) {
    if (!mine.has(p.pid) || !p.cmd.includes('--type=renderer')) continue;
    try {
      const st = readFileSync(`/proc/${p.pid}/task/${p.pid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      total += (Number(f[11]) + Number(f[12])) / 100; // clock ticks (CLK_TCK = 100)
    } catch {
      // exited
    }
  }
  return total;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  for (const f of ['dist/index.js', 'dist/kiln.wasm', 'dist/kiln-relaxed.wasm']) {
    if (!existsSync(join(REPO, f))) throw new Error(`${f} is missing: run scripts/build.sh first`);
  }
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const load0 = loadavg().map((x) => x.toFixed(2)).join(' ');
  const browser = await launchBrowser();
  const rows = [];
  let info;
  try {
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 120_000 });
    info = await page.evaluate(() => window.info);
    if (info.relaxed.build !== 'simd-relaxed' || info.simd.build !== 'simd' || info.tfjs.backend !== 'wasm') {
      throw new Error(`unexpected builds: ${JSON.stringify(info)}`);
    }
    console.log(`threads: Kiln ${info.relaxed.threads} (${info.relaxed.build}), ${info.simd.threads} (${info.simd.build}); TF.js ${info.tfjs.threads} (wasm, simd ${info.tfjs.simd}, crossOriginIsolated ${info.tfjs.crossOriginIsolated})`);
    for (const n of sizes) {
      const check = await page.evaluate((m) => window.prepare(m), n);
      for (const e of ENGINES) await page.evaluate(([engine, m]) => window.block(engine, m, 300), [e, n]); // warm-up
      const samples = Object.fromEntries(ENGINES.map((e) => [e, { cpu: [], wall: [] }]));
      for (let r = 0; r < reps; r++) {
        for (const e of ENGINES) {
          const c0 = rendererCpu(browser.profile);
          const b = await page.evaluate(([engine, m, ms]) => window.block(engine, m, ms), [e, n, minSeconds * 1000]);
          const c1 = rendererCpu(browser.profile);
          samples[e].cpu.push((c1 - c0) / b.calls);
          samples[e].wall.push(b.wall / 1000 / b.calls);
        }
      }
      const flops = 2 * n ** 3;
      const row = { n, check };
      for (const e of ENGINES) {
        row[e] = { cpuGflops: flops / median(samples[e].cpu) / 1e9, wallGflops: flops / median(samples[e].wall) / 1e9,
                   cpuRuns: samples[e].cpu.map((s) => Number((flops / s / 1e9).toFixed(1))) };
      }
      rows.push(row);
      console.log(`n = ${n}: GFLOP/s (CPU) relaxed ${row.relaxed.cpuGflops.toFixed(1)}, simd ${row.simd.cpuGflops.toFixed(1)}, tfjs ${row.tfjs.cpuGflops.toFixed(1)}` +
        `; wall ${row.relaxed.wallGflops.toFixed(1)} / ${row.simd.wallGflops.toFixed(1)} / ${row.tfjs.wallGflops.toFixed(1)}` +
        `; max |relaxed - simd| / max|C| ${check.relVsSimd.toExponential(1)}, vs TF.js ${check.relVsTfjs.toExponential(1)}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
  const load1 = loadavg().map((x) => x.toFixed(2)).join(' ');
  let chromium = 'chromium';
  try {
    chromium = execFileSync('/usr/bin/chromium', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().split('\n').pop();
  } catch {
    // keep the generic name
  }
  const lines = [
    `**Date:** ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC. **Machine:** ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load0} before, ${load1} after.`,
    `**Browser:** headless ${chromium}. **Command:** \`node bench/browser/sgemm.mjs --reps ${reps} --sizes ${sizes.join(',')}\`. **Threads:** 1 for every engine.`,
    '',
    '| n | Kiln relaxed SIMD (FMA) GFLOP/s | Kiln SIMD128 GFLOP/s | TF.js WASM GFLOP/s | relaxed / SIMD128 | relaxed / TF.js | wall GFLOP/s (relaxed / SIMD128 / TF.js) |',
    '|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.n} | **${r.relaxed.cpuGflops.toFixed(1)}** | ${r.simd.cpuGflops.toFixed(1)} | ${r.tfjs.cpuGflops.toFixed(1)} | ${(r.relaxed.cpuGflops / r.simd.cpuGflops).toFixed(2)} | ${(r.relaxed.cpuGflops / r.tfjs.cpuGflops).toFixed(2)} | ${r.relaxed.wallGflops.toFixed(1)} / ${r.simd.wallGflops.toFixed(1)} / ${r.tfjs.wallGflops.toFixed(1)} |`);
  }
  lines.push('', `GFLOP/s from the median CPU time per product of ${reps} blocks (CPU runs, relaxed: ${rows.map((r) => `n=${r.n} ${r.relaxed.cpuRuns.join('/')}`).join('; ')}).`);
  console.log(`\n${lines.join('\n')}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
