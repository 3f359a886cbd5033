// Browser benchmark: one MNIST epoch (60,000 images, batch 64, Adam 1e-3) of the anchor MLP
// (784-128-64-10) with Kiln and with TF.js 4.22's WASM backend (1 and 2 threads), and of the
// anchor CNN with Kiln (and TF.js, which is expected to fail), in headless Chromium, each in
// a Web Worker of the same page (bench/browser/). Writes the "Browser" section of
// bench/RESULTS.md (with --write) and prints a table.
//
//   node bench/browser/epoch.mjs [--reps N] [--items N] [--only kiln-mlp,tfjs-mlp-1,...] [--write] [--no-build]
//
// Runs are interleaved (rep by rep) so Kiln and TF.js see the same machine load.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, buildApp, startPreview, launchBrowser } from '../../tests/e2e/support.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const reps = Number(opt('--reps', 1));
const items = Number(opt('--items', 60000));
const only = opt('--only', null)?.split(',');

const CASES = [
  { id: 'kiln-mlp', label: 'Kiln, MLP, trainBatch loop', q: { engine: 'kiln', model: 'mlp', mode: 'trainBatch' } },
  { id: 'kiln-mlp-fit', label: 'Kiln, MLP, learner.fit', q: { engine: 'kiln', model: 'mlp', mode: 'fit' } },
  { id: 'tfjs-mlp-1', label: 'TF.js WASM, MLP, 1 thread', q: { engine: 'tfjs', model: 'mlp', threads: 1 } },
  { id: 'tfjs-mlp-2', label: 'TF.js WASM, MLP, 2 threads', q: { engine: 'tfjs', model: 'mlp', threads: 2 } },
  { id: 'kiln-cnn', label: 'Kiln, CNN, trainBatch loop', q: { engine: 'kiln', model: 'cnn', mode: 'trainBatch' } },
  { id: 'kiln-cnn-fit', label: 'Kiln, CNN, learner.fit', q: { engine: 'kiln', model: 'cnn', mode: 'fit' } },
  { id: 'tfjs-cnn-1', label: 'TF.js WASM, CNN, 1 thread', q: { engine: 'tfjs', model: 'cnn', threads: 1 } },
].filter((c) => !only || only.includes(c.id));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function runCase(context, base, c) {
  const page = await context.newPage();
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
        const r = await runCase(browser.context, server.url, c);
        results[c.id].push(r);
        console.log(
          r.ok
            ? `${c.id.padEnd(13)} rep ${rep + 1}: ${r.seconds.toFixed(2)} s/epoch (${Math.round(r.itemsPerSecond).toLocaleString('en-US')} img/s), test acc ${(r.testAccuracy * 100).toFixed(2)} %, threads ${r.info.threads ?? 1}, ${r.wasmFiles.join(' ')}`
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
      all: ok.map((r) => r.seconds),
      acc: median(ok.map((r) => r.testAccuracy)),
      threads: ok[0].info.threads ?? 1,
      info: ok[0].info,
      wasm: ok[0].wasmFiles.join(', '),
    };
  });
  const byId = Object.fromEntries(rows.map((r) => [r.c.id, r]));
  const ratio = (a, b) => (byId[a]?.seconds && byId[b]?.seconds ? (byId[b].seconds / byId[a].seconds).toFixed(1) : '–');
  const lines = [
    '## Browser',
    '',
    `**Date:** ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC. **Machine:** ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load0} before, ${load1} after.`,
    `**Browser:** headless ${chromium} (Debian), driven by playwright-core. **Command:** \`node bench/browser/epoch.mjs --reps ${reps}${items !== 60000 ? ` --items ${items}` : ''} --write\`.`,
    '',
    `One epoch of MNIST (${items.toLocaleString('en-US')} training images, batch 64, Adam lr 1e-3), each engine in a Web Worker of the`,
    'same page (bench/browser/: COOP/COEP headers, MNIST fetched from /mnist/, a seeded shuffle, each batch normalised',
    'from the bytes in JS and passed to the engine, the loss read back after every batch). Timed: the epoch after a',
    '30-batch warm-up on the same model; `learner.fit` rows time the package\'s own loop (kiln.data.mnist + fit).',
    'Test accuracy (10,000 test images) after the epoch is a check that each run trained.',
    `Medians of ${reps} run${reps > 1 ? 's' : ''}, interleaved.`,
    '',
    '| model | engine | threads (reported) | .wasm loaded | s / epoch | images / s | test accuracy | runs (s) |',
    '|---|---|---:|---|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const [model, engine] = [r.c.q.model.toUpperCase(), r.c.label.replace(/, (MLP|CNN)/, '')];
    if (r.failed) lines.push(`| ${model} | ${engine} | ${r.c.q.threads ?? 1} | — | — | — | — | failed: ${r.failed.replace(/\|/g, '\\|').slice(0, 160)} |`);
    else lines.push(`| ${model} | ${engine} | ${r.threads} | ${r.wasm} | **${r.seconds.toFixed(2)}** | ${Math.round(items / r.seconds).toLocaleString('en-US')} | ${(r.acc * 100).toFixed(2)} % | ${r.all.map((s) => s.toFixed(2)).join(', ')} |`);
  }
  lines.push('', `Kiln MLP (trainBatch loop) vs TF.js WASM 1 thread: **${ratio('kiln-mlp', 'tfjs-mlp-1')}×** faster; vs TF.js 2 threads: ${ratio('kiln-mlp', 'tfjs-mlp-2')}×.`, '');
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
