// Helpers for the browser tests and benchmarks: build a Vite app, serve its build output
// on a free port with the production server `npm start` runs (scripts/serve.mjs: sirv,
// precompressed gzip, COOP/COEP; started as `node scripts/serve.mjs` so the PID is the
// server's own), so the tests see what users get, and launch Debian's headless Chromium
// via playwright-core.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const VITE = join(REPO, 'node_modules/vite/bin/vite.js');

/** Builds the app whose root is `root` (relative to the repo), printing Vite's output on failure. */
export function buildApp(root, env = {}) {
  try {
    execFileSync(process.execPath, [VITE, 'build', root, '--logLevel', 'warn'], { cwd: REPO, stdio: 'pipe', env: { ...process.env, ...env } });
  } catch (e) {
    process.stderr.write(String(e.stdout ?? '') + String(e.stderr ?? ''));
    throw new Error(`vite build ${root} failed`);
  }
}

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

/** The build output folder of the Vite app whose root is `root` (its config's build.outDir). */
export async function outDirOf(root) {
  const { resolveConfig } = await import('vite');
  const config = await resolveConfig({ root: join(REPO, root), logLevel: 'silent' }, 'build', 'production');
  return resolve(config.root, config.build.outDir);
}

/**
 * Serves `root`'s build (its build.outDir) with scripts/serve.mjs on a free port.
 * @returns {Promise<{url: string, stop: () => void}>}
 */
export async function startPreview(root) {
  const port = await freePort();
  const dir = await outDirOf(root);
  const child = spawn(process.execPath, [join(REPO, 'scripts/serve.mjs'), dir, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}/`;
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', stop);
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`scripts/serve.mjs exited (${child.exitCode}):\n${output}`);
    try {
      const r = await fetch(url);
      if (r.ok) return { url, stop };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  stop();
  throw new Error(`scripts/serve.mjs did not answer on ${url}:\n${output}`);
}

/** Headless Chromium (TOOLCHAIN.md's launch arguments) in a throw-away profile. */
export async function launchBrowser(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'kiln-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.KILN_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...options,
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, close, profile };
}

const STATIC_TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

/**
 * A server on 127.0.0.1 (a free port) for pages that import the package without a bundler:
 * `texts` maps a path to [content type, text] (the page at '/', checks, workers); every other
 * path is a file of the repo if it starts with one of `prefixes` (e.g. '/dist/'), else 404.
 * Resolves to { url, close }.
 */
export async function startStaticServer(texts, prefixes = ['/dist/']) {
  const { createServer } = await import('node:http');
  const { readFileSync } = await import('node:fs');
  const { extname, join, normalize } = await import('node:path');
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const text = texts[path];
    if (text) {
      res.writeHead(200, { 'content-type': text[0] }).end(text[1]);
      return;
    }
    if (!prefixes.some((p) => path === p || (p.endsWith('/') && path.startsWith(p)))) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = readFileSync(join(REPO, path));
      res.writeHead(200, { 'content-type': STATIC_TYPES[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() };
}

/**
 * Opens `url` in a new page of `browser` (launchBrowser), logs the page's uncaught errors with
 * `log`, and waits until the page sets `window.ready = true`. Resolves to { page, wasm }: `wasm`
 * collects the file name of every .wasm the page requests, in order (clear it between steps).
 */
export async function openWasmPage(browser, url, log) {
  const page = await browser.context.newPage();
  const wasm = [];
  page.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(r.url().split('/').pop()); });
  page.on('pageerror', (e) => log(`page error: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(() => window.ready === true);
  return { page, wasm };
}

/**
 * The pass/fail bookkeeping of a checks script: `check(ok, what)` logs "ok: what" or
 * "FAIL: what"; `fail(error)` logs an unexpected exception as a failure; `finish()` logs the
 * summary and exits with status 1 if anything failed, else 0.
 */
export function checker(log) {
  let failures = 0;
  return {
    check(ok, what) {
      log(`${ok ? 'ok' : 'FAIL'}: ${what}`);
      if (!ok) failures++;
    },
    fail(error) {
      log(`FAIL: ${error?.stack ?? error}`);
      failures++;
    },
    finish() {
      log(failures ? `${failures} check(s) failed` : 'all checks passed');
      process.exit(failures ? 1 : 0);
    },
  };
}
