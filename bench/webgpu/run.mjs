// The WebGPU benchmark page (bench/webgpu/) driven headless: builds it with Vite, serves the
// build from 127.0.0.1 (scripts/serve.mjs: COOP/COEP; 127.0.0.1 is a secure context, which
// WebGPU needs), opens it in Debian's headless Chromium with --enable-unsafe-webgpu (the
// flags of tests/e2e/webgpu-api.e2e.mjs; without a GPU Chromium's WebGPU runs on SwiftShader,
// a CPU emulation) and prints the page's tables as markdown.
//
//   node bench/webgpu/run.mjs [--quick] [--sizes 512,1024] [--engines kiln-webgpu,kiln-cpu,tfjs-webgpu]
//        [--models mlp,cnn] [--items N] [--test-items N] [--reps N] [--min-ms MS] [--warmup BATCHES]
//        [--batches-per-call N] [--no-build] [--write]
//
// --quick: SGEMM n = 256, 512, 1,024 training images, 1,000 test images (SwiftShader is slow:
// a full run, with n = 4096 and a 60,000-image CNN epoch, takes hours there). --write puts the
// figures into bench/RESULTS.md as the section "## WebGPU (...)" (replacing an earlier one).
// To run the page by hand in a browser with a GPU: `npx vite bench/webgpu` and open
// http://localhost:5173/.
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, buildApp, startPreview, launchBrowser } from '../../tests/e2e/support.mjs';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const query = new URLSearchParams({ autorun: '1' });
if (args.includes('--quick')) query.set('quick', '1');
for (const [flag, key] of [['--sizes', 'sizes'], ['--engines', 'engines'], ['--models', 'models'], ['--items', 'items'], ['--test-items', 'testItems'],
  ['--reps', 'reps'], ['--min-ms', 'minMs'], ['--warmup', 'warmup'], ['--batches-per-call', 'batchesPerCall']]) {
  if (opt(flag) !== undefined) query.set(key, opt(flag));
}

async function main() {
  for (const f of ['dist/index.js', 'dist/kiln-webgpu.wasm', 'dist/kiln.wasm']) {
    if (!existsSync(join(REPO, f))) throw new Error(`${f} is missing: run scripts/build.sh first`);
  }
  const load0 = loadavg().map((x) => x.toFixed(2)).join(' ');
  if (!args.includes('--no-build')) buildApp('bench/webgpu');
  const server = await startPreview('bench/webgpu');
  const browser = await launchBrowser({
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu'],
  });
  let md;
  let results;
  const t0 = Date.now();
  try {
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    page.on('console', (m) => { if (m.text().startsWith('bench: ')) console.log(m.text().slice(7)); });
    await page.goto(`${server.url}?${query}`);
    await page.waitForFunction(() => window.__benchDone === true, null, { timeout: 0, polling: 1000 });
    md = await page.evaluate(() => window.__benchMarkdown);
    results = await page.evaluate(() => window.__benchResults);
  } finally {
    await browser.close();
    server.stop();
  }
  const load1 = loadavg().map((x) => x.toFixed(2)).join(' ');
  let chromium = 'chromium';
  try {
    chromium = execFileSync(process.env.KILN_CHROMIUM ?? '/usr/bin/chromium', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().split('\n').pop();
  } catch {
    // keep the generic name
  }
  const swiftshader = /swiftshader/i.test(results.meta.adapter);
  const title = swiftshader ? '## WebGPU (SwiftShader smoke figures — a CPU emulation, not a GPU)' : `## WebGPU (${results.meta.adapter})`;
  const cmd = `node bench/webgpu/run.mjs ${args.filter((a) => a !== '--write' && a !== '--no-build').join(' ')}`.trim();
  const section = [
    title,
    '',
    `**Machine:** ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load0} before, ${load1} after; ${((Date.now() - t0) / 1000).toFixed(0)} s in all.`,
    `**Headless:** ${chromium}, \`--enable-unsafe-webgpu\`, driven by playwright-core. **Command:** \`${cmd}\`.`,
    '',
    md.trim(),
    '',
    ...(swiftshader
      ? ['SwiftShader runs WebGPU on the CPU (Chromium without a GPU, here with `--disable-gpu`), on threads of its own over all the',
        `machine's cores (${cpus().length} here), while Kiln cpu uses 1 thread: these figures show that the page runs`,
        'end to end and what each engine computes; they say nothing about speed on a GPU. Run the page on a machine with a GPU',
        '(`npx vite bench/webgpu`, open http://localhost:5173/) for those.', '']
      : []),
  ].join('\n');
  console.log(`\n${section}`);
  mkdirSync(join(REPO, 'bench/out'), { recursive: true });
  writeFileSync(join(REPO, 'bench/out/webgpu.json'), JSON.stringify({ load0, load1, chromium, ...results }, null, 2));
  if (args.includes('--write')) {
    const path = join(REPO, 'bench/RESULTS.md');
    const text = readFileSync(path, 'utf8');
    const start = text.indexOf('\n## WebGPU (');
    let next;
    if (start >= 0) {
      const after = text.indexOf('\n## ', start + 1);
      next = `${text.slice(0, start + 1)}${section}${after >= 0 ? text.slice(after) : ''}`;
    } else {
      next = `${text.trimEnd()}\n\n${section}`;
    }
    writeFileSync(path, next);
    console.log(`[bench] wrote the WebGPU section of ${path}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
