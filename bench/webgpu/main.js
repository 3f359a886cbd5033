// The WebGPU benchmark page: runs each (task, engine) in a fresh worker (worker.js), one after
// the other, and shows the results as tables (HTML and markdown, window.__benchMarkdown for
// bench/webgpu/run.mjs). Query (all optional; ?autorun=1 starts at once):
//   quick=1 sizes=512,1024 engines=kiln-webgpu,kiln-cpu,tfjs-webgpu models=mlp,cnn items=60000
//   testItems=10000 batchesPerCall=1 reps=5 minMs=1000 warmup=30 autorun=1
import BenchWorker from './worker.js?worker';

const ENGINES = { 'kiln-webgpu': 'Kiln webgpu', 'kiln-cpu': 'Kiln cpu (1 thread)', 'tfjs-webgpu': 'TF.js webgpu' };
const FULL = { sizes: [512, 1024, 2048, 4096], items: 60000, testItems: 10000, reps: 5, minMs: 1000, warmup: 30 };
const QUICK = { sizes: [256, 512], items: 1024, testItems: 1000, reps: 3, minMs: 200, warmup: 3 };

const $ = (id) => document.getElementById(id);
const form = $('form');
const logEl = $('log');
const log = (text) => {
  logEl.textContent += `${text}\n`;
  console.log(`bench: ${text}`);
};
const q = new URLSearchParams(location.search);
const list = (s) => s.split(',').map((x) => x.trim()).filter((x) => x);

/** The settings: quick or full defaults, then the query's, then (when from the form) the form's. */
function settings(fromForm) {
  const quick = fromForm ? form.quick.checked : q.get('quick') === '1';
  const base = quick ? QUICK : FULL;
  const s = {
    quick,
    // sizes= or models= (empty) leaves that part out.
    sizes: q.has('sizes') ? list(q.get('sizes')).map(Number) : base.sizes,
    engines: q.has('engines') ? list(q.get('engines')) : Object.keys(ENGINES),
    models: q.has('models') ? list(q.get('models')) : ['mlp', 'cnn'],
    items: Number(q.get('items') ?? base.items),
    testItems: Number(q.get('testItems') ?? base.testItems),
    batchesPerCall: Number(q.get('batchesPerCall') ?? 1),
    reps: Number(q.get('reps') ?? base.reps),
    minMs: Number(q.get('minMs') ?? base.minMs),
    warmup: Number(q.get('warmup') ?? base.warmup),
    batch: 64,
  };
  if (fromForm) {
    const checked = (name) => [...form.querySelectorAll(`input[name=${name}]:checked`)].map((i) => i.value);
    s.sizes = quick ? QUICK.sizes : checked('size').map(Number);
    s.engines = checked('engine');
    s.models = checked('model');
    s.items = quick ? QUICK.items : Number(form.items.value);
    s.batchesPerCall = Number(form.batchesPerCall.value);
  }
  return s;
}

function fillForm(s) {
  form.quick.checked = s.quick;
  for (const i of form.querySelectorAll('input[name=size]')) i.checked = s.sizes.includes(Number(i.value));
  for (const i of form.querySelectorAll('input[name=engine]')) i.checked = s.engines.includes(i.value);
  for (const i of form.querySelectorAll('input[name=model]')) i.checked = s.models.includes(i.value);
  form.items.value = s.items;
  form.batchesPerCall.value = String(s.batchesPerCall);
}

/** Runs one task in a fresh worker; resolves to its result message ({ ok, ... }). */
function inWorker(params) {
  return new Promise((resolve) => {
    const w = new BenchWorker();
    w.onmessage = (ev) => {
      if (ev.data.type === 'log') return log(ev.data.text);
      w.terminate();
      resolve(ev.data);
    };
    w.onerror = (e) => {
      w.terminate();
      resolve({ ok: false, error: `worker error: ${e.message ?? 'unknown'}` });
    };
    w.postMessage({ ...params, mnistBase: new URL('./mnist/', document.baseURI).href });
  });
}

async function adapterName() {
  try {
    const a = await navigator.gpu?.requestAdapter();
    if (!a) return navigator.gpu ? 'none (requestAdapter() found no adapter)' : 'none (no navigator.gpu)';
    const i = a.info ?? {};
    return [i.vendor, i.architecture, i.description || i.device].filter((x) => x).join(' ') || 'unknown adapter';
  } catch (e) {
    return `none (${e.message})`;
  }
}

function browserName() {
  const brands = navigator.userAgentData?.brands?.filter((b) => !/Not.A.Brand/i.test(b.brand)).map((b) => `${b.brand} ${b.version}`);
  return brands?.length ? `${brands.join(', ')} (${navigator.userAgent})` : navigator.userAgent;
}

const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const na = (error) => ({ na: `not available: ${error}` });
/** An error for a markdown cell: one line, pipes escaped, at most 320 characters. */
const mdCell = (t) => {
  const one = t.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
  return one.length > 320 ? `${one.slice(0, 319)}…` : one;
};
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : '–');

/** The tables as { title, head, rows }; a cell is a string or { na }. */
function tables(s, r) {
  const out = [];
  if (r.sgemm) {
    const rows = s.sizes.map((n) => {
      const cell = {};
      const g = {};
      for (const e of s.engines) {
        const res = r.sgemm[e];
        const row = res?.ok ? res.rows.find((x) => x.n === n) : null;
        if (!res?.ok) cell[e] = na(res?.error ?? 'not run');
        else if (!row?.ok) cell[e] = na(row?.error ?? 'not run');
        else {
          g[e] = row.gflops;
          cell[e] = `${fmt(row.gflops)} (err ${row.check.toExponential(0)})`;
        }
      }
      return [String(n), ...s.engines.map((e) => cell[e]), ratio(g['kiln-webgpu'], g['tfjs-webgpu']), ratio(g['kiln-webgpu'], g['kiln-cpu'])];
    });
    out.push({ title: 'SGEMM C = A·B (n × n, float32): GFLOP/s', head: ['n', ...s.engines.map((e) => ENGINES[e]), 'Kiln webgpu / TF.js webgpu', 'Kiln webgpu / Kiln cpu'], rows });
  }
  if (r.epoch) {
    const rows = s.models.map((m) => {
      const speed = {};
      const cells = s.engines.map((e) => {
        const res = r.epoch[`${m}/${e}`];
        if (!res?.ok) return na(res?.error ?? 'not run');
        speed[e] = res.imagesPerSecond;
        return `${fmt(res.seconds)} s (${Math.round(res.imagesPerSecond).toLocaleString('en-US')} img/s, test acc. ${fmt(res.accuracy * 100, 1)} %)`;
      });
      return [m.toUpperCase(), ...cells, ratio(speed['kiln-webgpu'], speed['tfjs-webgpu']), ratio(speed['kiln-webgpu'], speed['kiln-cpu'])];
    });
    out.push({
      title: `One MNIST epoch (${s.items.toLocaleString('en-US')} training images, batch ${s.batch}, Adam lr 1e-3): seconds`,
      head: ['model', ...s.engines.map((e) => ENGINES[e]), 'Kiln webgpu / TF.js webgpu', 'Kiln webgpu / Kiln cpu'],
      rows,
    });
  }
  return out;
}

function method(s) {
  return [
    `SGEMM: A and B uniform in [−0.5, 0.5), uploaded once. Per size and engine: one product read back (warm-up: shader compilation, wasm tier-up) and checked at 64 sampled entries against a float64 dot product in JS ("err": max |C − ref| / max |ref|); then ${s.reps} timed blocks of k products each followed by one read of the last product (\`await c.data()\`; the GPU queue runs in order, so this waits for all k), k chosen so a block lasts about ${s.minMs} ms; GFLOP/s = 2n³ / (block time / k), median of the blocks. The read of one n × n result is inside the block.`,
    `MNIST: one epoch of the MLP 784-128-64-10 and the CNN (conv 3×3 8, pool, conv 3×3 16, pool, linear 400-10) of bench/browser, batch ${s.batch}, Adam lr 1e-3, after a warm-up of ${s.warmup} batches on the same model. Kiln (both backends): \`kiln.data.mnist\` + \`new kiln.Learner(model, {optimizer, loss: 'crossEntropy'}).fit(ds, {epochs: 1, batchSize: ${s.batch}, batchesPerCall: ${s.batchesPerCall}})\`. TF.js: tfjs-core ops, \`optimizer.minimize\` per batch on a batch normalised in JS, the loss read (\`await loss.data()\`) every ${s.batchesPerCall} batch(es). Timed until training resolved and a 1-image forward pass (which needs the last step's parameters) was read. Test accuracy on the first ${s.testItems.toLocaleString('en-US')} test images checks that each run trained.`,
    'Ratios are speed ratios (GFLOP/s, images/s): above 1 means Kiln webgpu is faster. Threads: Kiln cpu is the single-threaded WebAssembly build (`init({ backend: \'cpu\', engine: \'full\', threads: false })`, 1 thread); the webgpu engines run their kernels on the GPU. Wall-clock times (performance.now() in the worker).',
  ];
}

function render(s, r, meta) {
  const ts = tables(s, r);
  const html = [];
  const md = [];
  html.push(`<p><b>Adapter:</b> ${meta.adapter}<br><b>Browser:</b> ${meta.browser}<br><b>Date:</b> ${meta.date}${s.quick ? ' (quick mode)' : ''}<br><b>Builds:</b> ${meta.builds}</p>`);
  md.push(`**Adapter:** ${meta.adapter}. **Browser:** ${meta.browser}. **Date:** ${meta.date}${s.quick ? ' (quick mode)' : ''}. **Builds:** ${meta.builds}.`, '');
  const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  for (const t of ts) {
    html.push(`<h3>${t.title}</h3><table><tr>${t.head.map((h) => `<th>${h}</th>`).join('')}</tr>`);
    md.push(`${t.title}`, '', `| ${t.head.join(' | ')} |`, `|${t.head.map((_, i) => (i ? '---:' : '---')).join('|')}|`);
    for (const row of t.rows) {
      html.push(`<tr>${row.map((c) => (typeof c === 'string' ? `<td>${c}</td>` : `<td class="na">${esc(c.na)}</td>`)).join('')}</tr>`);
      md.push(`| ${row.map((c) => (typeof c === 'string' ? c : mdCell(c.na))).join(' | ')} |`);
    }
    html.push('</table>');
    md.push('');
  }
  $('results').innerHTML = html.join('\n');
  const m = method(s);
  $('method').innerHTML = `<h3>Method</h3>${m.map((p) => `<p>${esc(p).replace(/`([^`]*)`/g, '<code>$1</code>')}</p>`).join('')}`;
  md.push(...m.flatMap((p) => [p, '']));
  return md.join('\n');
}

async function run(s) {
  $('run').disabled = true;
  window.__benchDone = false;
  logEl.textContent = '';
  const meta = { adapter: await adapterName(), browser: browserName(), date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`, builds: '' };
  log(`settings: ${JSON.stringify(s)}`);
  log(`adapter: ${meta.adapter}`);
  const r = { sgemm: s.sizes.length ? {} : null, epoch: s.models.length ? {} : null };
  const infos = {};
  const update = () => {
    meta.builds = Object.entries(infos).map(([e, i]) => {
      let text;
      if (i.tfjs) text = `tfjs-core ${i.tfjs} + tfjs-backend-webgpu, backend ${i.backend}`;
      else if (i.engine === 'webgpu') text = `kiln-webgpu.wasm, ${i.backend} (its host code: build ${i.build}, ${i.threads} thread)`;
      else text = `${i.backend}, engine ${i.engine}, build ${i.build}, ${i.threads} thread${i.threads === 1 ? '' : 's'}`;
      return `${ENGINES[e]}: ${text}${i.adapter ? `, adapter ${i.adapter}` : ''}`;
    }).join('; ');
    window.__benchMarkdown = render(s, r, meta);
  };
  update();
  if (s.sizes.length) {
    for (const engine of s.engines) {
      log(`SGEMM, ${ENGINES[engine]} …`);
      r.sgemm[engine] = await inWorker({ task: 'sgemm', engine, sizes: s.sizes, reps: s.reps, minMs: s.minMs });
      if (r.sgemm[engine].info) infos[engine] = r.sgemm[engine].info;
      if (!r.sgemm[engine].ok) log(`${engine}: ${r.sgemm[engine].error}`);
      update();
    }
  }
  for (const model of s.models) {
    for (const engine of s.engines) {
      log(`MNIST ${model}, ${ENGINES[engine]} …`);
      const res = await inWorker({ task: 'epoch', engine, model, items: s.items, testItems: s.testItems, batch: s.batch, batchesPerCall: s.batchesPerCall, warmup: s.warmup });
      r.epoch[`${model}/${engine}`] = res;
      if (res.info) infos[engine] ??= res.info;
      if (!res.ok) log(`${model} ${engine}: ${res.error}`);
      update();
    }
  }
  window.__benchResults = { settings: s, meta, results: r };
  window.__benchDone = true;
  $('run').disabled = false;
  log('done');
}

form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  run(settings(true));
});
form.quick.addEventListener('change', () => {
  for (const i of form.querySelectorAll('input[name=size]')) i.disabled = form.quick.checked;
  form.items.disabled = form.quick.checked;
});
const initial = settings(false);
fillForm(initial);
form.quick.dispatchEvent(new Event('change'));
if (q.get('autorun') === '1') run(initial);
