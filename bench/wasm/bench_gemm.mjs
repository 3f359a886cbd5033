// WebAssembly benchmark: Kiln's SGEMM (n = 128, 256, 512, 1024) and a large element-wise
// add, against TensorFlow.js's WASM backend (SIMD, one thread) in the same Node process.
// Reports medians, GFLOP/s (GB/s for the add) and the ratio Kiln / TF.js, and writes them
// to bench/RESULTS-wasm.md.
//
//   node bench/wasm/bench_gemm.mjs [--quick] [--out FILE]
//
// Both engines are warmed up before timing: V8 compiles wasm with a baseline tier first and
// swaps in optimised code later, and a long call can stay in the baseline tier
// (../shared/reference/performance-anchors.md). TF.js's .wasm files are read from
// node_modules (no network). Anchor: TF.js WASM ~35 GFLOP/s at n = 512 on this machine kind.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { init } from 'kiln-dl';
import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outIndex = args.indexOf('--out');
const root = fileURLToPath(new URL('../..', import.meta.url));
const outPath = outIndex >= 0 ? args[outIndex + 1] : join(root, 'bench', 'RESULTS-wasm.md');

const GEMM_SIZES = [128, 256, 512, 1024];
const ADD_ELEMENTS = 1 << 22; // 4 Mi floats = 16 MiB per operand
const MIN_SECONDS = quick ? 0.3 : 1.5; // timed seconds per case and engine
const WARMUP_SECONDS = quick ? 0.2 : 0.5;

const loadStart = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');

// ---- engines ----
// One thread, stated (issue 17): the single-threaded build, as TF.js below; the full engine
// (today's engine, as before the core profile).
const kiln = await init({ engine: 'full', threads: false });
console.log(`threads: Kiln ${kiln.backendInfo().threads} (${kiln.backendInfo().build ?? 'simd'}), TF.js 1`);

const require = createRequire(import.meta.url);
const tfWasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
setWasmPaths(join(tfWasmDir, 'dist') + '/'); // a file path: Node's loader reads it with fs
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // single thread, as Kiln here
tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
await tf.setBackend('wasm');
await tf.ready();
if (tf.getBackend() !== 'wasm') throw new Error(`TF.js backend is ${tf.getBackend()}, not wasm`);

// ---- helpers ----
function randomArray(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Milliseconds of CPU time (user + system) and of wall time taken by one call of op. */
function timeCall(op) {
  const wall0 = performance.now();
  const cpu0 = process.cpuUsage();
  op();
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / 1000, wall: performance.now() - wall0 };
}

/**
 * Warms both ops up for WARMUP_SECONDS, then times single calls of each, alternating
 * kiln, tf, kiln, tf... for MIN_SECONDS each (>= 5 calls), so that a change of load hits
 * both engines alike. Rates use the median CPU time of the process (both engines run on
 * one thread here): on a shared, loaded machine wall time mostly measures the scheduler.
 */
function timePair(kilnOp, tfOp) {
  const warmEnd = performance.now() + WARMUP_SECONDS * 1000;
  for (let i = 0; performance.now() < warmEnd || i < 2; i++) {
    kilnOp();
    tfOp();
  }
  const kilnTimes = [];
  const tfTimes = [];
  const end = performance.now() + 2 * MIN_SECONDS * 1000;
  while (performance.now() < end || kilnTimes.length < 5) {
    kilnTimes.push(timeCall(kilnOp));
    tfTimes.push(timeCall(tfOp));
  }
  const summary = (times) => ({
    ms: median(times.map((t) => t.cpu)),
    wallMs: median(times.map((t) => t.wall)),
    reps: times.length,
  });
  return { kiln: summary(kilnTimes), tf: summary(tfTimes) };
}

function maxRelDiff(a, b) {
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(b[i]));
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst / (scale || 1);
}

// ---- SGEMM ----
const gemmRows = [];
for (const n of GEMM_SIZES) {
  const aData = randomArray(n * n, 1 + n);
  const bData = randomArray(n * n, 2 + n);
  const ka = kiln.Tensor.fromData(aData, { shape: [n, n] });
  const kb = kiln.Tensor.fromData(bData, { shape: [n, n] });
  const ta = tf.tensor2d(aData, [n, n]);
  const tb = tf.tensor2d(bData, [n, n]);

  // Same result from both (checked once, outside the timing).
  const kc = ka.matmul(kb);
  const tc = tf.matMul(ta, tb);
  const diff = maxRelDiff(kc.dataSync(), tc.dataSync());
  kc.dispose();
  tc.dispose();
  if (!(diff < 1e-4)) throw new Error(`n = ${n}: Kiln and TF.js differ (max rel diff ${diff})`);

  // TF.js's WASM kernels run synchronously inside matMul, so timing the call is fair.
  const { kiln: kilnTime, tf: tfTime } = timePair(
    () => ka.matmul(kb).dispose(),
    () => tf.matMul(ta, tb).dispose(),
  );
  const flops = 2 * n ** 3;
  const row = {
    n,
    kilnWallMs: kilnTime.wallMs,
    tfWallMs: tfTime.wallMs,
    kilnMs: kilnTime.ms,
    kilnGflops: flops / kilnTime.ms / 1e6,
    tfMs: tfTime.ms,
    tfGflops: flops / tfTime.ms / 1e6,
    reps: kilnTime.reps,
  };
  row.ratio = row.kilnGflops / row.tfGflops;
  gemmRows.push(row);
  console.log(
    `sgemm n=${String(n).padStart(4)}: Kiln ${row.kilnGflops.toFixed(1).padStart(6)} GFLOP/s ` +
      `(${row.kilnMs.toFixed(3)} ms)  TF.js ${row.tfGflops.toFixed(1).padStart(6)} GFLOP/s ` +
      `(${row.tfMs.toFixed(3)} ms)  ratio ${row.ratio.toFixed(2)}`,
  );
  ka.dispose();
  kb.dispose();
  ta.dispose();
  tb.dispose();
}

// ---- element-wise add ----
let addRow;
{
  const n = ADD_ELEMENTS;
  const aData = randomArray(n, 3);
  const bData = randomArray(n, 4);
  const ka = kiln.Tensor.fromData(aData, { shape: [n] });
  const kb = kiln.Tensor.fromData(bData, { shape: [n] });
  const ta = tf.tensor1d(aData);
  const tb = tf.tensor1d(bData);
  const kc = ka.add(kb);
  const tc = tf.add(ta, tb);
  const diff = maxRelDiff(kc.dataSync(), tc.dataSync());
  kc.dispose();
  tc.dispose();
  if (!(diff < 1e-6)) throw new Error(`add: Kiln and TF.js differ (max rel diff ${diff})`);
  const { kiln: kilnTime, tf: tfTime } = timePair(
    () => ka.add(kb).dispose(),
    () => tf.add(ta, tb).dispose(),
  );
  const bytes = 3 * 4 * n; // two reads and one write
  addRow = {
    n,
    kilnWallMs: kilnTime.wallMs,
    tfWallMs: tfTime.wallMs,
    kilnMs: kilnTime.ms,
    kilnGBs: bytes / kilnTime.ms / 1e6,
    tfMs: tfTime.ms,
    tfGBs: bytes / tfTime.ms / 1e6,
    reps: kilnTime.reps,
  };
  addRow.ratio = addRow.kilnGBs / addRow.tfGBs;
  console.log(
    `add ${n} floats: Kiln ${addRow.kilnGBs.toFixed(1)} GB/s (${addRow.kilnMs.toFixed(3)} ms)  ` +
      `TF.js ${addRow.tfGBs.toFixed(1)} GB/s (${addRow.tfMs.toFixed(3)} ms)  ` +
      `ratio ${addRow.ratio.toFixed(2)}`,
  );
  ka.dispose();
  kb.dispose();
  ta.dispose();
  tb.dispose();
}

const leaked = kiln.memory().buffers;
if (leaked !== 0) console.warn(`warning: ${leaked} Kiln buffers still live`);

// ---- report ----
const tfPkg = require('@tensorflow/tfjs-backend-wasm/package.json');
const lines = [
  '# WebAssembly benchmark results',
  '',
  `Measured by \`node bench/wasm/bench_gemm.mjs${quick ? ' --quick' : ''}\` on ` +
    `${new Date().toISOString().slice(0, 10)}: ${cpus()[0].model}, Node ${process.version}, ` +
    `one thread. Kiln ${kiln.backendInfo().arch} kernels (lowered to SIMD128); TF.js ` +
    `${tfPkg.version} WASM backend, SIMD binary, threads off. Load average at the start ` +
    `${loadStart}. Medians of single calls after a warm-up, calls of the two engines ` +
    `alternating in the same process; ms and rates are CPU time of the process (the machine ` +
    `is shared: wall times, also shown, include time spent waiting for a core); ` +
    `reps = timed calls per engine; ratio = Kiln / TF.js (above 1: Kiln faster).`,
  '',
  '## SGEMM (C = A·B, float32, n x n)',
  '',
  '| n | Kiln ms | Kiln GFLOP/s | TF.js ms | TF.js GFLOP/s | ratio | wall ms (Kiln/TF.js) | reps |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...gemmRows.map(
    (r) =>
      `| ${r.n} | ${r.kilnMs.toFixed(3)} | ${r.kilnGflops.toFixed(1)} | ${r.tfMs.toFixed(3)} | ` +
      `${r.tfGflops.toFixed(1)} | ${r.ratio.toFixed(2)} | ` +
      `${r.kilnWallMs.toFixed(3)} / ${r.tfWallMs.toFixed(3)} | ${r.reps} |`,
  ),
  '',
  `## Element-wise add (${addRow.n} floats; GB/s counts two reads and one write)`,
  '',
  '| elements | Kiln ms | Kiln GB/s | TF.js ms | TF.js GB/s | ratio | wall ms (Kiln/TF.js) | reps |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|',
  `| ${addRow.n} | ${addRow.kilnMs.toFixed(3)} | ${addRow.kilnGBs.toFixed(1)} | ` +
    `${addRow.tfMs.toFixed(3)} | ${addRow.tfGBs.toFixed(1)} | ${addRow.ratio.toFixed(2)} | ` +
    `${addRow.kilnWallMs.toFixed(3)} / ${addRow.tfWallMs.toFixed(3)} | ${addRow.reps} |`,
  '',
  'Anchor (../shared/reference/performance-anchors.md): TF.js WASM ~35 GFLOP/s at n = 512 ' +
    'in Node; the WASM SIMD128 peak of one core is ~51 GFLOP/s (no FMA: mul + add).',
  '',
];
writeFileSync(outPath, lines.join('\n'));
console.log(`wrote ${outPath}`);
