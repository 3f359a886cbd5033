// End-to-end tests of the in-browser tutorial (issue 16) in headless Chromium
// (playwright-core, /usr/bin/chromium): builds web/ with `vite build`, serves it with
// `vite preview` on a free port, and in a fresh profile:
//   run-all      Run all: every cell ends `ok` and each cell's output passes its
//                expectation (tests/tutorial/expect/<step>.mjs, the same functions the
//                Node test applies); screenshots of each step; the Run-all time and the
//                MNIST accuracy line go to test-output/tutorial/summary.json
//   shape-error  a cell edited to a shape error shows `KilnError [Shape]` and its line
//                under it; Reset restores the original code
//   resume       after a reload, the cell whose id ends in `-resume` resumes training from
//                the checkpoint in IndexedDB (prints a resumed epoch > 1)
//   stop         a `while (true) {}` cell is ended by Stop; the page names the cells to
//                re-run; after re-running them, the later cells run `ok`
//   offline      with the network off, a reload still renders the page (service worker)
//                and a cell runs
//   keyboard     Tab reaches a cell's Run, Reset and editor with a visible focus ring,
//                Ctrl+Enter runs the cell, Tab leaves the editor
//   phone        the page at a phone's size (screenshot; no horizontal page overflow)
// and no console errors anywhere. Without content in web/tutorial/content it runs on the
// notebook's fixture step (tests/tutorial/fixture). Run by scripts/test.sh, or alone:
//   node tests/e2e/tutorial.e2e.mjs [--no-build] [--only name,name]
// Exit status 1 if any test failed.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, buildApp, startPreview, launchBrowser } from './support.mjs';

const OUT = join(REPO, 'test-output/tutorial');
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;

// The content under test: the tutorial's, or the fixture step while there is none.
const realContent = join(REPO, 'web/tutorial/content');
const hasContent = existsSync(realContent) && readdirSync(realContent).some((n) => n.endsWith('.md'));
if (!process.env.KILN_TUTORIAL_CONTENT && !hasContent) {
  process.env.KILN_TUTORIAL_CONTENT = 'tests/tutorial/fixture/content';
  process.env.KILN_TUTORIAL_EXPECT = 'tests/tutorial/fixture/expect';
}
const { loadTutorial, stepFiles, loadExpectations } = await import('../js/support/notebook_node.mjs');

const RUN_ALL_TIMEOUT = Number(process.env.KILN_TUTORIAL_TIMEOUT_MS ?? 40 * 60_000);
const consoleErrors = [];
const results = [];
const summary = { content: process.env.KILN_TUTORIAL_CONTENT ?? 'web/tutorial/content' };

function check(cond, message) {
  if (!cond) throw new Error(message);
}

function watchConsole(page, label) {
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`${label}: console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => consoleErrors.push(`${label}: uncaught: ${err.message}`));
  page.on('crash', () => consoleErrors.push(`${label}: the page crashed`));
  page.on('close', () => process.env.KILN_E2E_DEBUG && console.log(`[debug] ${label} page closed`));
  page.on('worker', (w) =>
    w.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(`${label} (worker): console.error: ${msg.text()}`);
    }),
  );
}

async function open(url, label) {
  const page = await context.newPage();
  watchConsole(page, label);
  await page.goto(url);
  await page.waitForSelector('[data-cell]');
  return page;
}

const cellSel = (id) => `[data-cell="${id}"]`;
const statusOf = (page, id) => page.$eval(cellSel(id), (e) => e.dataset.status);
const outputOf = (page, id) => page.evaluate((i) => window.kilnTutorial.outputText(i), id);

async function waitIdle(page, timeout) {
  await page.waitForFunction(() => !document.body.hasAttribute('data-busy'), null, { timeout, polling: 250 });
}

async function waitStatus(page, id, wanted, timeout = 120_000) {
  try {
    await page.waitForFunction(([i, w]) => w.includes(document.querySelector(`[data-cell="${i}"]`)?.dataset.status), [id, wanted], { timeout, polling: 100 });
  } catch {
    throw new Error(`cell ${id} did not become ${wanted.join('/')} (now ${await statusOf(page, id)}): ${await outputOf(page, id)}`);
  }
}

/** Runs one cell with its Run button and waits for it to end. */
async function runOne(page, id, timeout) {
  await page.click(`${cellSel(id)} button.run`);
  await waitStatus(page, id, ['ok', 'error'], timeout);
  return statusOf(page, id);
}

/** Replaces a cell's code by typing into its editor (select all, insert). */
async function editCell(page, id, code) {
  await page.click(`${cellSel(id)} .cm-content`);
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(code);
}

const editorText = (page, id) => page.$eval(`${cellSel(id)} .cm-content`, (e) => e.cmView?.view?.state.doc.toString() ?? [...e.querySelectorAll('.cm-line')].map((l) => l.textContent).join('\n'));

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

let base;
let context;
const steps = loadTutorial();
const expectations = new Map(); // cell id -> check
for (const file of stepFiles()) {
  const ex = (await loadExpectations(file)) ?? {};
  for (const [id, fn] of Object.entries(ex)) expectations.set(id, fn);
}
const allIds = steps.flatMap((s) => s.cells.map((c) => c.id));
const codeOf = new Map(steps.flatMap((s) => s.cells.map((c) => [c.id, c.code])));

test('run-all', async () => {
  const page = await open(`${base}tutorial/`, 'run-all');
  check(JSON.stringify(await page.evaluate(() => window.kilnTutorial.cells())) === JSON.stringify(allIds), 'the page shows the cells of the content files, in order');
  check((await page.$$eval('[data-cell]', (els) => els.map((e) => e.dataset.status))).every((s) => s === 'idle'), 'cells start idle');
  const t0 = Date.now();
  await page.click('#run-all');
  await page.waitForFunction(() => document.body.hasAttribute('data-busy'), null, { timeout: 10_000 }).catch(() => {});
  await waitIdle(page, RUN_ALL_TIMEOUT);
  const ms = Date.now() - t0;
  summary.cells = allIds.length;
  summary.runAllMs = ms;
  summary.runAllSeconds = Math.round(ms / 100) / 10;
  const failures = [];
  const perCell = {};
  for (const id of allIds) {
    const st = await statusOf(page, id);
    const text = await outputOf(page, id);
    perCell[id] = { status: st, ms: await page.$eval(`${cellSel(id)} .badge`, (b) => b.textContent) };
    if (st !== 'ok') {
      failures.push(`${id}: status ${st}: ${text.slice(0, 400)}`);
      continue;
    }
    const fn = expectations.get(id);
    if (!fn) {
      failures.push(`${id}: no expectation`);
      continue;
    }
    try {
      await fn(text);
    } catch (e) {
      failures.push(`${id}: ${e.message}\n--- output ---\n${text.slice(0, 1000)}`);
    }
  }
  summary.perCell = perCell;
  // The MNIST result, as the Learner cell printed it: the first cell whose output has a
  // `test accuracy: <x>` line after a Step that loaded MNIST.
  const mnistFrom = allIds.findIndex((id) => /mnist\.load/.test(codeOf.get(id)));
  for (const id of mnistFrom < 0 ? [] : allIds.slice(mnistFrom)) {
    const lines = (await outputOf(page, id)).split('\n');
    const acc = lines.find((l) => /^test accuracy:\s*[\d.]+$/.test(l));
    if (!acc) continue;
    summary.mnist = { cell: id, accuracyLine: acc, epochLines: lines.filter((l) => /^epoch \d+:/.test(l)), cellTime: perCell[id].ms };
    summary.mnistAccuracyLine = `${id}: ${acc}`;
    break;
  }
  for (const s of steps) {
    await page.locator(`#step-${s.step}`).screenshot({ path: join(OUT, `step-${String(s.step).padStart(2, '0')}.png`) });
  }
  await page.screenshot({ path: join(OUT, 'run-all.png') });
  check(failures.length === 0, `${failures.length} cell(s) failed after Run all:\n${failures.join('\n')}`);
  runAllPage = page;
  return `${allIds.length} cells ok in ${summary.runAllSeconds} s${summary.mnistAccuracyLine ? `; ${summary.mnistAccuracyLine}` : ''}`;
});

let runAllPage = null;

test('shape-error', async () => {
  const page = runAllPage ?? (await open(`${base}tutorial/`, 'shape-error'));
  const id = allIds[0];
  await editCell(page, id, 'const m = kiln.Tensor.ones([2, 3]);\nconst p = m.matmul(m);\nprint("not reached");');
  // run from the keyboard, in the editor
  await page.keyboard.press('Shift+Enter');
  await waitStatus(page, id, ['ok', 'error']);
  check((await statusOf(page, id)) === 'error', 'the edited cell ends in error');
  const marked = await page.$$eval(`${cellSel(id)} .cm-error-line`, (els) => els.map((e) => e.textContent));
  check(marked.length === 1 && marked[0] === 'const p = m.matmul(m);', `the error's line is highlighted in the editor (${marked})`);
  const err = await page.$eval(`${cellSel(id)} [data-output] .out-error`, (e) => ({ text: e.textContent, code: e.dataset.code, line: e.dataset.line }));
  check(err.code === 'Shape', `error code Shape under the cell (got ${err.code})`);
  check(err.line === '2', `error at line 2 (got ${err.line})`);
  check(/^KilnError \[Shape\] at line 2: matmul/.test(err.text), `the error text names code, line and op: ${err.text}`);
  check(!(await outputOf(page, id)).includes('not reached'), 'nothing after the error ran');
  await page.locator(cellSel(id)).screenshot({ path: join(OUT, 'shape-error.png') });
  await page.click(`${cellSel(id)} button.reset`);
  check((await editorText(page, id)) === codeOf.get(id), 'Reset restores the original code');
  check((await runOne(page, id)) === 'ok', 'the reset cell runs ok');
  return err.text;
});

test('resume', async () => {
  const resumeId = allIds.find((id) => id.endsWith('-resume'));
  check(resumeId, 'a cell whose id ends in -resume');
  const page = runAllPage ?? (await open(`${base}tutorial/`, 'resume'));
  await page.reload();
  await page.waitForSelector('[data-cell]');
  check((await statusOf(page, resumeId)) === 'idle', 'after the reload the notebook is fresh');
  const st = await runOne(page, resumeId, RUN_ALL_TIMEOUT);
  const text = await outputOf(page, resumeId);
  check(st === 'ok', `the resume cell runs ok after a reload: ${text}`);
  const m = /resumed at epoch:\s*(\d+)/i.exec(text) ?? /resum\w*\D*?(\d+)/i.exec(text);
  check(m && Number(m[1]) > 1, `it printed a resumed epoch > 1: ${text}`);
  const fn = expectations.get(resumeId);
  if (fn) await fn(text);
  await page.locator(cellSel(resumeId)).screenshot({ path: join(OUT, 'resume.png') });
  summary.resume = { cell: resumeId, epoch: Number(m[1]), output: text };
  return `${resumeId}: resumed at epoch ${m[1]}`;
});

test('stop', async () => {
  const page = await open(`${base}tutorial/`, 'stop');
  // The first step's cells: run the first ones, make the next a runaway loop, Stop.
  const first = steps[0].cells.map((c) => c.id);
  check(first.length >= 2, 'the first step has at least 2 cells');
  const k = Math.min(2, first.length - 1); // the cell made a loop
  for (const id of first.slice(0, k)) check((await runOne(page, id)) === 'ok', `${id} runs ok`);
  const loopId = first[k];
  await editCell(page, loopId, 'let spins = 0;\nwhile (true) {\n  spins++;\n}');
  await page.click(`${cellSel(loopId)} button.run`);
  await waitStatus(page, loopId, ['running']);
  await page.waitForFunction(() => !document.getElementById('stop').disabled);
  await page.click('#stop');
  await waitStatus(page, loopId, ['error'], 10_000);
  const notice = await page.$eval('#notice', (e) => e.textContent);
  const stale = await page.$$eval('[data-stale]', (els) => els.map((e) => e.dataset.cell));
  check(JSON.stringify(stale) === JSON.stringify(first.slice(0, k)), `the cells to re-run are marked (${stale})`);
  for (const id of first.slice(0, k)) check(notice.includes(id), `the notice names ${id}: ${notice}`);
  check(/Stopped/.test(await outputOf(page, loopId)), 'the stopped cell says so');
  await page.screenshot({ path: join(OUT, 'stop.png') });
  // Re-run the named cells, restore the loop cell, and the later cells run.
  for (const id of stale) check((await runOne(page, id)) === 'ok', `${id} re-runs ok`);
  await page.click(`${cellSel(loopId)} button.reset`);
  for (const id of first.slice(k)) {
    const st = await runOne(page, id, RUN_ALL_TIMEOUT);
    const text = await outputOf(page, id);
    check(st === 'ok', `${id} runs ok after Stop: ${text}`);
    await expectations.get(id)?.(text);
  }
  await page.close();
  return `stopped ${loopId}; re-ran ${stale.join(', ')}; then ${first.slice(k).join(', ')} ok`;
});

test('offline', async () => {
  const page = await open(`${base}tutorial/`, 'offline');
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.reload(); // now controlled by the service worker
  await page.waitForFunction(() => Boolean(navigator.serviceWorker.controller), null, { timeout: 30_000 });
  await context.setOffline(true);
  try {
    await page.reload();
    await page.waitForSelector('[data-cell]', { timeout: 30_000 });
    const id = allIds[0];
    const st = await runOne(page, id);
    const text = await outputOf(page, id);
    check(st === 'ok', `a cell runs offline: ${text}`);
    await expectations.get(id)?.(text);
    // MNIST, fetched by Run all, comes from the cache too
    const mnistCell = runAllPage ? allIds.find((c) => /mnist\.load\(/.test(codeOf.get(c))) : null;
    if (mnistCell) {
      const ms = await runOne(page, mnistCell, 120_000);
      const out = await outputOf(page, mnistCell);
      check(ms === 'ok', `${mnistCell} loads MNIST offline: ${out}`);
      await expectations.get(mnistCell)?.(out);
      summary.offlineMnistCell = mnistCell;
    }
    await page.screenshot({ path: join(OUT, 'offline.png') });
  } finally {
    await context.setOffline(false);
  }
  await page.close();
  return `reloaded and ran ${allIds[0]}${summary.offlineMnistCell ? ` and ${summary.offlineMnistCell} (MNIST)` : ''} with the network off`;
});

test('keyboard', async () => {
  const page = await open(`${base}tutorial/`, 'keyboard');
  const id = allIds[0];
  // Tab from the top of the page reaches the first cell's Run button, Reset, then its editor.
  const focused = () => page.evaluate(() => {
    const a = document.activeElement;
    return { cell: a?.closest('[data-cell]')?.dataset.cell ?? null, cls: a?.className ?? '', tag: a?.tagName ?? '', ring: getComputedStyle(a).boxShadow !== 'none' || getComputedStyle(a).outlineStyle !== 'none' };
  });
  let f = null;
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    f = await focused();
    if (f.cell === id && f.cls.includes('run')) break;
  }
  check(f?.cell === id && f.cls.includes('run'), `Tab reaches the Run button of ${id} (${JSON.stringify(f)})`);
  check(f.ring, 'the focused button shows a focus ring');
  await page.keyboard.press('Tab');
  check((await focused()).cls.includes('reset'), 'then Reset');
  await page.keyboard.press('Tab');
  f = await focused();
  check(f.cell === id && f.cls.includes('cm-content'), `then the editor (${JSON.stringify(f)})`);
  const ring = await page.$eval(`${cellSel(id)} .editor`, (e) => getComputedStyle(e).boxShadow);
  check(ring !== 'none', 'the focused editor shows a focus ring');
  await page.keyboard.press('Control+Enter');
  await waitStatus(page, id, ['ok', 'error']);
  check((await statusOf(page, id)) === 'ok', 'Ctrl+Enter runs the cell');
  // Tab leaves the editor (it does not insert a tab)
  await page.keyboard.press('Tab');
  f = await focused();
  check(f.cell !== id || !f.cls.includes('cm-content'), `Tab moves focus out of the editor (${JSON.stringify(f)})`);
  check((await editorText(page, id)) === codeOf.get(id), 'the code is unchanged');
  await page.close();
  return 'Tab order Run -> Reset -> editor; Ctrl+Enter runs; Tab leaves the editor';
});

test('phone', async () => {
  const page = await context.newPage();
  watchConsole(page, 'phone');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}tutorial/`);
  await page.waitForSelector('[data-cell]');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 0, `no horizontal scrolling of the page on a phone (${overflow}px too wide)`);
  const withTabs = await page.$(`.cell .tabs`);
  if (withTabs) {
    // Burn / C++ / JS are tabs: one panel visible at a time, the JS editor by default.
    const cell = await withTabs.evaluateHandle((t) => t.closest('.cell'));
    const visible = () => cell.evaluate((c) => [...c.querySelectorAll('.panel')].filter((p) => p.offsetParent !== null).map((p) => p.className));
    const v0 = await visible();
    check(v0.length === 1 && v0[0].includes('panel-js'), `only the JS panel shows first (${v0})`);
    await withTabs.$eval('button[data-tab]', (b) => b.click());
    const v1 = await visible();
    check(v1.length === 1 && !v1[0].includes('panel-js'), `a tab shows another panel (${v1})`);
  }
  await page.screenshot({ path: join(OUT, 'phone.png'), fullPage: false });
  await page.screenshot({ path: join(OUT, 'phone-full.png'), fullPage: true });
  await page.close();
  return 'phone layout ok';
});

// ---- main ----
mkdirSync(OUT, { recursive: true });
if (!existsSync(process.env.KILN_CHROMIUM ?? '/usr/bin/chromium')) {
  console.log('[tutorial e2e] skipped: no /usr/bin/chromium');
  process.exit(0);
}
if (!args.includes('--no-build')) buildApp('web');
const server = await startPreview('web');
base = server.url;
({ context } = await launchBrowser({ viewport: { width: 1400, height: 900 } }).then((b) => {
  closeBrowser = b.close;
  return b;
}));
var closeBrowser;
let failed = 0;
for (const t of tests) {
  if (only && !only.includes(t.name)) continue;
  const t0 = Date.now();
  try {
    const note = await t.fn();
    results.push({ name: t.name, ok: true, ms: Date.now() - t0, note });
    console.log(`ok   ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s) ${note ?? ''}`);
  } catch (e) {
    failed++;
    results.push({ name: t.name, ok: false, ms: Date.now() - t0, error: e.message });
    console.log(`FAIL ${t.name}: ${e.message}`);
  }
}
if (consoleErrors.length) {
  failed++;
  console.log(`FAIL console errors:\n  ${consoleErrors.join('\n  ')}`);
}
results.push({ name: 'no console errors', ok: consoleErrors.length === 0, errors: consoleErrors });
writeFileSync(join(OUT, 'summary.json'), JSON.stringify({ ...summary, results }, null, 2));
// A browser that crashed may never answer close(): do not wait for it forever.
await Promise.race([closeBrowser().catch(() => {}), new Promise((r) => setTimeout(r, 15_000))]);
server.stop();
console.log(failed ? `[tutorial e2e] ${failed} failed` : '[tutorial e2e] all passed');
process.exit(failed ? 1 : 0);
