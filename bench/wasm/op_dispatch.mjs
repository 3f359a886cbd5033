// The op switches of the core engine (dist/kiln-core.wasm) against a saved copy of an
// earlier core build ("before"), in one run, one thread (the single-threaded build; no
// pool), in Node: the per-op overhead of tiny ops (untracked and tracked, through
// AutodiffOps and the CpuOps switches) and the element-wise, unary and reduce kernels those
// switches run. Written for the out-of-line op kernels and rules (engine/src/core/apart.hpp):
// each switch case is an indirect call in WebAssembly, which must not cost measurable time.
// Both engines run under the same JS layer (dist/module.js), so only the .wasm differs.
// Times are CPU time of this process (process.cpuUsage, user + system), the best of
// `--repeat` rounds, the engines interleaved round by round, each round starting with the
// next engine (the machine may be shared).
//
//   node bench/wasm/op_dispatch.mjs --before DIR [--repeat 7] [--only TEXT]
//   (DIR holds kiln-core.mjs + kiln-core.wasm of the build to compare with; --only runs the
//   cases whose name contains TEXT)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { finishModule } from '../../dist/module.js';
import { deferredLoader } from '../../dist/deferred.js';
import { fileSource } from '../../dist/deferred_node.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const repeat = Number(opt('--repeat', '7'));
const before = opt('--before', null);
const only = opt('--only', '');

const engines = [{ name: 'core', dir: dist }];
if (before) engines.push({ name: 'before', dir: before });
for (const e of engines) {
  const { default: create } = await import(pathToFileURL(join(e.dir, 'kiln-core.mjs')).href);
  // A split engine's deferred half loads on first use (dist/deferred.js; its trampolines are
  // made at init), as in the package.
  const deferredFile = join(e.dir, 'kiln-core.deferred.wasm');
  const deferred = deferredLoader(existsSync(deferredFile) ? fileSource(pathToFileURL(deferredFile)) : null);
  const raw = await create({ wasmBinary: readFileSync(join(e.dir, 'kiln-core.wasm')), ...deferred.options });
  e.kiln = finishModule(raw, {}, { maxThreads: 1, engine: 'core', deferred: deferred.control });
}

/** CPU seconds of fn(). */
function cpu(fn) {
  const t = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1e6;
}

/** µs per call of op(a, b) on two tensors of `shape`, n calls; grad: a tracked leaf. */
const perCall = (shape, n, op, { grad = false, unit = 1e6 } = {}) => (k) => {
  k.seed(1);
  const a = k.Tensor.random(shape);
  const b = k.Tensor.random(shape);
  if (grad) a.requireGrad();
  const s = cpu(() => {
    for (let i = 0; i < n; i++) op(a, b).dispose();
  });
  a.dispose();
  b.dispose();
  return (s / n) * unit;
};

const ms = { unit: 1e3 };
const tracked = { grad: true };
const big = [1024, 1024];
const cases = [
  { name: 'tiny add [4] (µs/op)', run: perCall([4], 20000, (a, b) => a.add(b)) },
  { name: 'tiny relu [4] (µs/op)', run: perCall([4], 20000, (a) => a.relu()) },
  { name: 'tiny sum [4] (µs/op)', run: perCall([4], 20000, (a) => a.sum()) },
  { name: 'tiny add [4], tracked lhs (µs/op)', run: perCall([4], 20000, (a, b) => a.add(b), tracked) },
  { name: 'tiny exp [4], tracked (µs/op)', run: perCall([4], 20000, (a) => a.exp(), tracked) },
  { name: 'mul [256, 256], in cache (µs)', run: perCall([256, 256], 2000, (a, b) => a.mul(b)) },
  { name: 'exp [256, 256], in cache (µs)', run: perCall([256, 256], 500, (a) => a.exp()) },
  { name: 'sumDim(0) [256, 256], in cache (µs)', run: perCall([256, 256], 2000, (a) => a.sumDim(0)) },
  { name: 'mul 1M floats (ms)', run: perCall(big, 50, (a, b) => a.mul(b), ms) },
  { name: 'exp 1M floats (ms)', run: perCall(big, 50, (a) => a.exp(), ms) },
  { name: 'relu 1M floats (ms)', run: perCall(big, 50, (a) => a.relu(), ms) },
  { name: 'sum 1M floats (ms)', run: perCall(big, 50, (a) => a.sum(), ms) },
  { name: 'sumDim(1) [1024, 1024] (ms)', run: perCall(big, 50, (a) => a.sumDim(1), ms) },
  { name: 'sumDim(0) [1024, 1024] (ms)', run: perCall(big, 50, (a) => a.sumDim(0), ms) },
];

console.log('threads: 1 (single-threaded core build), Node', process.version);
console.log(`CPU time, best of ${repeat} (engines interleaved)`);
console.log(`${'case'.padEnd(40)} ${engines.map((e) => e.name.padStart(9)).join(' ')}`);
for (const c of cases.filter((x) => x.name.includes(only))) {
  const best = engines.map(() => Infinity);
  for (let r = 0; r < repeat; r++) {
    for (let j = 0; j < engines.length; j++) {
      const i = (r + j) % engines.length;
      best[i] = Math.min(best[i], c.run(engines[i].kiln));
    }
  }
  console.log(`${c.name.padEnd(40)} ${best.map((v) => v.toFixed(3).padStart(9)).join(' ')}`);
}
