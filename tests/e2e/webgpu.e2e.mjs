// End-to-end test of the Wgpu backend (issue 21) in headless Chromium with WebGPU (run by
// scripts/test.sh after scripts/build.sh; `node tests/e2e/webgpu.e2e.mjs [cases_x.mjs ...]`,
// exit status 0 when every case passed). Chromium runs with --enable-unsafe-webgpu on a page
// served from 127.0.0.1 (WebGPU needs a secure context); its adapter here is SwiftShader (a
// CPU implementation of Vulkan: slow, but exact about the API). The page
// (tests/webgpu/page.mjs) runs every case of tests/webgpu/cases_*.mjs on the Cpu and the Wgpu
// backend in the harness build/wasm/webgpu/kiln-webgpu-harness.* and compares the two;
// cases_shared.mjs runs the PyTorch reference cases (tests/native/cases/*.jsonl) on both and
// compares each with the case file's expected values.
// Skips (exit 0) without /usr/bin/chromium.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const log = (line) => console.log(`[e2e webgpu] ${line}`);

if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
const harness = join(repo, 'build/wasm/webgpu/kiln-webgpu-harness.mjs');
if (!existsSync(harness)) {
  console.error(`[e2e webgpu] ${harness} is missing: run scripts/build.sh first`);
  process.exit(1);
}
const { checker, launchBrowser } = await import('./support.mjs');
const { createServer } = await import('node:http');

const modules = process.argv.length > 2
  ? process.argv.slice(2)
  : readdirSync(join(repo, 'tests/webgpu')).filter((f) => /^cases_.*\.mjs$/.test(f)).sort();

// /harness/* is build/wasm/webgpu/*; /tests/webgpu/* the page, its support and the cases;
// /tests/native/cases/* the PyTorch reference cases (tests/webgpu/cases_shared.mjs).
const page = '<!doctype html><script type="module" src="/tests/webgpu/page.mjs"></script>';
const { readFileSync } = await import('node:fs');
const TYPES = { '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.jsonl': 'text/plain' };
const http = createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  let file = null;
  if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  if (path.startsWith('/harness/')) file = join(repo, 'build/wasm/webgpu', path.slice('/harness/'.length));
  else if (path.startsWith('/tests/webgpu/') || path.startsWith('/tests/native/cases/')) file = join(repo, path);
  if (!file || file.includes('..') || !existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise((r) => http.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${http.address().port}/`;

const { check, fail, finish } = checker(log);
const browser = await launchBrowser({
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu'],
});
try {
  const p = await browser.context.newPage();
  p.on('pageerror', (e) => log(`page error: ${e.message}`));
  await p.goto(url);
  await p.waitForFunction(() => window.ready === true, null, { timeout: 60_000 });
  const out = await p.evaluate((m) => window.runCases(m), modules);
  if (out.skipped) {
    fail(new Error(`Chromium has no WebGPU adapter (${out.skipped}): launched with --enable-unsafe-webgpu on 127.0.0.1`));
  } else {
    log(`adapter: ${out.adapter}; ${out.results.length} cases from ${modules.join(', ')}`);
    for (const r of out.results) {
      check(!r.failure, `${r.module}: ${r.name}${r.failure ? ` — ${r.failure}` : ''}`);
      for (const s of r.skipped ?? []) log(`  not checked: ${s}`);
    }
    log(`device work: ${JSON.stringify(out.stats)}`);
  }
} catch (e) {
  fail(e);
} finally {
  await browser.close();
  http.close();
}
finish();
