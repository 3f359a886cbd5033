// Browser benchmark: one MNIST epoch (60,000 images, batch 64, Adam 1e-3) of the anchor MLP
// (784-128-64-10) with Kiln and with TF.js 4.22's WASM backend (1 and 2 threads), and of the
// anchor CNN with Kiln (and TF.js, which is expected to fail), in headless Chromium, each in
// a Web Worker of the same page (bench/browser/). Writes the "Browser" section of
// bench/RESULTS.md (with --write) and prints a table.
//
//   node bench/browser/epoch.mjs [--reps N] [--items N] [--only kiln-mlp,tfjs-mlp-1,...] [--write] [--no-build]
//
// Runs are interleaved (rep by rep) so Kiln and TF.js see the same machine load.
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, buildApp, startPreview, launchBrowser } from '../../tests/e2e/support.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const reps = Number(opt('--reps', 1));
const items = Number(opt('--items', 60000));
const only = opt('--only', null)?.split(',');


// ---- CPU time of the engines: the browser's worker threads, read from /proc ----
// Chromium names a dedicated worker's thread "DedicatedWorker thread" (comm: the first 15
// characters); TF.js's pthreads are dedicated workers too. The page logs bench:epoch-start
// and bench:epoch-end (posted by the worker around its timed loop); the runner sums
// utime + stime of those threads in all of this browser's processes at both moments.
const TICK_S = 0.01; // getconf CLK_TCK = 100 on Linux

function browserPids(profile) {
  const procs = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      procs.push({ pid: Number(d), ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), cmd });
    } catch {
      // exited
    }
  }
  const set = new Set(procs.filter((p) => p.cmd.includes(profile)).map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) {
      if (!set.has(p.pid) && set.has(p.ppid)) {
        set.add(p.pid);
        grew = true;
      }
    }
  }
  return [...set];
}

export function threadTimes(pids, namePattern = /^DedicatedWorker/) {
  const out = new Map(); // "pid/tid" -> seconds
  for (const pid of pids) {
    let tasks;
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
        if (!namePattern.test(comm)) continue;
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        out.set(`${pid}/${tid}`, (Number(f[11]) + Number(f[12])) * TICK_S); // utime, stime
      } catch {
        // thread exited
      }
    }
  }
  return out;
}

/** CPU seconds between two threadTimes snapshots (threads new in the second count from 0). */
function cpuBetween(a, b) {
  let s = 0;
  for (const [k, v] of b) s += v - (a.get(k) ?? 0);
  return s;
}

const CASES = [
  { id: 'kiln-mlp', label: 'Kiln, MLP, trainBatch loop, 1 thread', q: { engine: 'kiln', model: 'mlp', mode: 'trainBatch', threads: 1 } },
  { id: 'kiln-mlp-2', label: 'Kiln, MLP, trainBatch loop, 2 threads', q: { engine: 'kiln', model: 'mlp', mode: 'trainBatch', threads: 2 } },
  { id: 'kiln-mlp-mt1', label: 'Kiln, MLP, trainBatch loop, threaded build on 1 thread', q: { engine: 'kiln', model: 'mlp', mode: 'trainBatch', threads: 1, mt: '1' } },
  { id: 'kiln-mlp-fit', label: 'Kiln, MLP, learner.fit, 1 thread', q: { engine: 'kiln', model: 'mlp', mode: 'fit', threads: 1 } },
  { id: 'tfjs-mlp-1', label: 'TF.js WASM, MLP, 1 thread', q: { engine: 'tfjs', model: 'mlp', threads: 1 } },
  { id: 'tfjs-mlp-2', label: 'TF.js WASM, MLP, 2 threads', q: { engine: 'tfjs', model: 'mlp', threads: 2 } },
  { id: 'kiln-cnn', label: 'Kiln, CNN, trainBatch loop, 1 thread', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', threads: 1 } },
  { id: 'kiln-cnn-2', label: 'Kiln, CNN, trainBatch loop, 2 threads', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', threads: 2 } },
  { id: 'kiln-cnn-mt1', label: 'Kiln, CNN, trainBatch loop, threaded build on 1 thread', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', threads: 1, mt: '1' } },
  { id: 'kiln-cnn-fit', label: 'Kiln, CNN, learner.fit, 1 thread', q: { engine: 'kiln', model: 'cnn', mode: 'fit', threads: 1 } },
  { id: 'tfjs-cnn-1', label: 'TF.js WASM, CNN, 1 thread', q: { engine: 'tfjs', model: 'cnn', threads: 1 } },
  // Relaxed SIMD (FMA) against SIMD128, both Kiln's single-threaded build (relaxed=1 / 0).
  { id: 'kiln-mlp-relaxed', label: 'Kiln relaxed SIMD (FMA), MLP, trainBatch loop', q: { engine: 'kiln', model: 'mlp', mode: 'trainBatch', relaxed: '1' } },
  { id: 'kiln-mlp-simd128', label: 'Kiln SIMD128, MLP, trainBatch loop', q: { engine: 'kiln', model: 'mlp', mode: 'trainBatch', relaxed: '0' } },
  { id: 'kiln-cnn-relaxed', label: 'Kiln relaxed SIMD (FMA), CNN, trainBatch loop', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', relaxed: '1' } },
  { id: 'kiln-cnn-simd128', label: 'Kiln SIMD128, CNN, trainBatch loop', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', relaxed: '0' } },
  // The threaded build with SIMD128 (kiln-mt.wasm) on 1 and 2 threads.
  { id: 'kiln-cnn-mt1-simd128', label: 'Kiln SIMD128, CNN, trainBatch loop, threaded build on 1 thread', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', threads: 1, mt: '1', relaxed: '0' } },
  { id: 'kiln-cnn-2-simd128', label: 'Kiln SIMD128, CNN, trainBatch loop, 2 threads', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch', threads: 2, relaxed: '0' } },
].filter((c) => !only || only.includes(c.id));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function runCase(context, base, c, profile) {
  const page = await context.newPage();
  const snaps = {};
  page.on('console', (msg) => {
    const m = /^bench:(epoch-start|epoch-end)$/.exec(msg.text());
    if (m) snaps[m[1]] = threadTimes(browserPids(profile));
  });
  const errors = [];
  const wasmFiles = new Set();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (req) => {
    const m = /([^/]+)\.wasm(\?|$)/.exec(req.url());
    if (m) wasmFiles.add(m[1].replace(/-[A-Za-z0-9_-]{8}$/, '')); // Vite's content hash off
  });
  const q = new URLSearchParams({ ...c.q, items: String(items) });
  await page.goto(`${base}?${q}`);
  await page.waitForFunction(() => window.__benchResult, null, { timeout: 900_000, polling: 250 });
  const r = await page.evaluate(() => window.__benchResult);
  await page.close();
  if (errors.length && r.ok) r.pageErrors = errors;
  r.wasmFiles = [...wasmFiles];
  if (snaps['epoch-start'] && snaps['epoch-end']) {
    r.cpuSeconds = cpuBetween(snaps['epoch-start'], snaps['epoch-end']);
    r.workerThreads = [...snaps['epoch-end'].values()].length;
    // CPU seconds of each worker thread over the epoch, largest first (do the threads share the work?)
    r.cpuPerThread = [...snaps['epoch-end']].map(([k, v]) => v - (snaps['epoch-start'].get(k) ?? 0)).sort((a, b) => b - a).map((x) => Number(x.toFixed(2)));
  }
  return r;
}

async function main() {
  const load0 = loadavg().map((x) => x.toFixed(2)).join(' ');
  if (!args.includes('--no-build')) buildApp('bench/browser');
  const server = await startPreview('bench/browser');
  const browser = await launchBrowser();
  const results = Object.fromEntries(CASES.map((c) => [c.id, []]));
  let chromium = '';
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const c of CASES) {
        const r = await runCase(browser.context, server.url, c, browser.profile);
        results[c.id].push(r);
        console.log(
          r.ok
            ? `${c.id.padEnd(13)} rep ${rep + 1}: ${r.seconds.toFixed(2)} s/epoch, CPU ${r.cpuSeconds?.toFixed(2)} s in ${r.workerThreads} worker threads (${Math.round(r.itemsPerSecond).toLocaleString('en-US')} img/s), test acc ${(r.testAccuracy * 100).toFixed(2)} %, threads ${r.info.threads ?? 1}, ${r.wasmFiles.join(' ')}`
            : `${c.id.padEnd(13)} rep ${rep + 1}: FAILED: ${r.error}`,
        );
      }
    }
  } finally {
    await browser.close();
    server.stop();
  }
  const load1 = loadavg().map((x) => x.toFixed(2)).join(' ');
  if (!chromium) {
    try {
      chromium = execFileSync('/usr/bin/chromium', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().split('\n').pop();
    } catch {
      chromium = 'chromium';
    }
  }
  const rows = CASES.map((c) => {
    const rs = results[c.id];
    const ok = rs.filter((r) => r.ok);
    if (!ok.length) return { c, failed: rs[0]?.error ?? 'no run' };
    return {
      c,
      seconds: median(ok.map((r) => r.seconds)),
      cpu: ok.every((r) => r.cpuSeconds !== undefined) ? median(ok.map((r) => r.cpuSeconds)) : null,
      all: ok.map((r) => r.seconds),
      allCpu: ok.map((r) => r.cpuSeconds),
      acc: median(ok.map((r) => r.testAccuracy)),
      threads: ok[0].info.threads ?? 1,
      workerThreads: ok[0].workerThreads,
      info: ok[0].info,
      wasm: ok[0].wasmFiles.join(', '),
    };
  });
  const byId = Object.fromEntries(rows.map((r) => [r.c.id, r]));
  const ratio = (a, b, key) => (byId[a]?.[key] && byId[b]?.[key] ? (byId[b][key] / byId[a][key]).toFixed(1) : '–');
  /** Wall-clock speed-up of case `b` (2 threads) over case `a` (1 thread). */
  const speedup = (a, b) => (byId[a]?.seconds && byId[b]?.seconds ? (byId[a].seconds / byId[b].seconds).toFixed(2) : '–');
  const lines = [
    '## Browser',
    '',
    `**Date:** ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC. **Machine:** ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load0} before, ${load1} after.`,
    `**Browser:** headless ${chromium} (Debian), driven by playwright-core. **Command:** \`node bench/browser/epoch.mjs --reps ${reps}${items !== 60000 ? ` --items ${items}` : ''} --write\`.`,
    '',
    `One epoch of MNIST (${items.toLocaleString('en-US')} training images, batch 64, Adam lr 1e-3), each engine in a Web Worker of the`,
    'same page (bench/browser/: COOP/COEP headers, MNIST fetched from /mnist/, a seeded shuffle, each batch normalised',
    'from the bytes in JS and passed to the engine, the loss read back after every batch: the playground\'s set-up).',
    'Timed: the epoch after a 30-batch warm-up on the same model; `learner.fit` rows time the package\'s own loop',
    '(kiln.data.mnist + fit, batches gathered in WebAssembly). **Wall** is the worker\'s clock; **CPU** is the',
    'utime + stime of the browser\'s dedicated-worker threads over the epoch (/proc; TF.js\'s pthreads are such',
    'workers too), the figure that the machine\'s other load does not inflate. Test accuracy on the 10,000 test',
    `images after the epoch checks that each run trained. Medians of ${reps} run${reps > 1 ? 's' : ''}, engines interleaved.`,
    '',
    '| model | engine | threads (reported / worker threads) | .wasm loaded | wall s / epoch | CPU s / epoch | images / CPU s | test accuracy | wall runs (s) | CPU runs (s) |',
    '|---|---|---|---|---:|---:|---:|---:|---|---|',
  ];
  for (const r of rows) {
    const [model, engine] = [r.c.q.model.toUpperCase(), r.c.label.replace(/, (MLP|CNN)/, '')];
    if (r.failed) {
      lines.push(`| ${model} | ${engine} | ${r.c.q.threads ?? 1} | — | — | — | — | — | failed: ${r.failed.replace(/\|/g, '\\|').slice(0, 160)} | |`);
    } else {
      lines.push(
        `| ${model} | ${engine} | ${r.threads} / ${r.workerThreads ?? '?'} | ${r.wasm} | **${r.seconds.toFixed(2)}** | **${r.cpu?.toFixed(2) ?? '–'}** | ${r.cpu ? Math.round(items / r.cpu).toLocaleString('en-US') : '–'} | ${(r.acc * 100).toFixed(2)} % | ${r.all.map((x) => x.toFixed(2)).join(', ')} | ${r.allCpu.map((x) => x?.toFixed(2)).join(', ')} |`,
      );
    }
  }
  lines.push(
    '',
    `Kiln MLP (trainBatch loop, the playground's path) against TF.js WASM 1 thread: **${ratio('kiln-mlp', 'tfjs-mlp-1', 'cpu')}×** faster in CPU time (${ratio('kiln-mlp', 'tfjs-mlp-1', 'seconds')}× in wall time); against TF.js with 2 threads requested: ${ratio('kiln-mlp', 'tfjs-mlp-2', 'cpu')}× (CPU), ${ratio('kiln-mlp', 'tfjs-mlp-2', 'seconds')}× (wall). Kiln \`learner.fit\` against TF.js 1 thread: ${ratio('kiln-mlp-fit', 'tfjs-mlp-1', 'cpu')}× (CPU), ${ratio('kiln-mlp-fit', 'tfjs-mlp-1', 'seconds')}× (wall).`,
    '',
    `Kiln 2 threads against 1 (trainBatch loop, wall): MLP ${speedup('kiln-mlp', 'kiln-mlp-2')}×, CNN ${speedup('kiln-cnn', 'kiln-cnn-2')}×; the threaded build on 2 threads against itself on 1: MLP ${speedup('kiln-mlp-mt1', 'kiln-mlp-2')}×, CNN ${speedup('kiln-cnn-mt1', 'kiln-cnn-2')}×; its SIMD128 variant (kiln-mt.wasm) on 2 threads against 1: CNN ${speedup('kiln-cnn-mt1-simd128', 'kiln-cnn-2-simd128')}× (above 1: the second thread pays; wall time is the figure, CPU time adds the second thread's work and its spin-waits).`,
    '',
    "Notes. Kiln's rows state their threads: 1 = init({threads: false}) (kiln-relaxed.wasm where relaxed SIMD validates, else kiln.wasm), 2 = init({threads: true,",
    'numThreads: 2}) (kiln-mt-relaxed.wasm, or kiln-mt.wasm; the .wasm column says which; `backendInfo().threads` reported). TF.js was asked for 2 threads on a cross-origin-isolated page and loaded its threaded SIMD binary',
    "(8 pthread workers appear besides the benchmark's worker), but `getThreadsCount()` reports 1 and the",
    "per-thread /proc times show all of the epoch's CPU time on one thread, none on the pthreads (as",
    "performance-anchors.md saw). TF.js 4.22's WASM backend cannot train the CNN (no `Conv2DBackpropFilter`",
    'kernel). The machine was shared with other builds (load average ~5 on 2 cores): wall times vary by up to',
    '2x between runs, CPU times by ~20 %; quote the CPU ratio. The same epoch in Node (bench/RESULTS-wasm.md,',
    "Kiln `fit` 1.1-1.3 s CPU, TF.js 8.6 s) agrees with the browser's figures.",
    '',
  );
  const section = lines.join('\n');
  console.log(`\n${section}`);
  if (args.includes('--write')) {
    const path = join(REPO, 'bench/RESULTS.md');
    const text = readFileSync(path, 'utf8');
    const start = text.indexOf('\n## Browser\n');
    let next;
    if (start >= 0) {
      const after = text.indexOf('\n## ', start + 1);
      next = `${text.slice(0, start + 1)}${section}${after >= 0 ? text.slice(after) : ''}`;
    } else {
      next = `${text.trimEnd()}\n\n${section}`;
    }
    writeFileSync(path, next);
    console.log(`[bench] wrote the Browser section of ${path}`);
  }
  writeFileSync(join(REPO, 'bench/out/browser-epoch.json'), JSON.stringify({ date: new Date().toISOString(), load0, load1, results }, null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
