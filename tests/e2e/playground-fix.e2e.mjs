// End-to-end checks of the playground defects of issue 18 (its last bullet), one test each,
// in headless Chromium through the shared harness; screenshots in
// test-output/playground/fix-<name>.png.
//   node tests/e2e/playground-fix.e2e.mjs [--no-build] [--only name,name]
import { NUMBER_FIELDS } from '../../web/src/state.js';
import { launchBrowser } from './support.mjs';
import { test, run, env, check, shot, open, waitStatus, metric } from './playground_support.mjs';

const fieldError = (page, id) =>
  page.$eval(`#${id}`, (el) => {
    const box = el.closest('.field').querySelector('.field-error');
    if (!box) return null;
    const a = el.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return { text: box.textContent, gap: b.top - a.bottom, invalid: el.getAttribute('aria-invalid'), describedBy: el.getAttribute('aria-describedby'), id: box.id, value: el.value };
  });

test('field-error', async () => {
  // A bad value typed far down the page: the message is beside the field (not only at the
  // top), the field keeps what was typed, the run keeps the last good value.
  const page = await open('#data=xor', 'field-error');
  await waitStatus(page, ['idle'], 60_000);
  await page.fill('#batch', '0');
  await page.$eval('#batch', (el) => el.dispatchEvent(new Event('change')));
  const e = await fieldError(page, 'batch');
  check(e, 'no message beside the batch size');
  check(/Batch size/.test(e.text) && /from 1 to 4096/.test(e.text) && /keeps 16/.test(e.text), `message: ${e.text}`);
  check(e.gap >= -1 && e.gap < 40, `the message is ${e.gap} px from the field`);
  check(e.invalid === 'true' && e.describedBy.split(' ').includes(e.id), `aria: invalid=${e.invalid} describedby=${e.describedBy}`);
  check(e.value === '0', `the field lost what was typed (${e.value})`);
  check(/batch=16/.test(page.url()), `the set-up changed: ${page.url()}`);
  const top = await page.$eval('#messages', (el) => el.textContent);
  check(!/Batch/.test(top), `the message went to the top: ${top}`);
  await page.$eval('#batch', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'fix-field-error', false);
  // Fixed: the message goes, the set-up takes the value.
  await page.fill('#batch', '32');
  await page.$eval('#batch', (el) => el.dispatchEvent(new Event('change')));
  check((await fieldError(page, 'batch')) === null, 'the message stayed after a good value');
  check(/batch=32/.test(page.url()), `URL: ${page.url()}`);
  // A layer's bad units: the message is in the layer's own box.
  await page.fill('#layers li:first-child input[type=number]', '0');
  await page.$eval('#layers li:first-child input[type=number]', (el) => el.dispatchEvent(new Event('change')));
  const layerMsg = await page.$eval('#layers li:first-child', (li) => li.querySelector('.field-error')?.textContent ?? '');
  check(/units must be an integer from 1 to 1024, got 0/.test(layerMsg), `layer message: ${layerMsg}`);
  await page.close();
  return 'batch 0: message beside the field, typed text kept, set-up unchanged; layer units 0: message in the layer';
});

test('link-sliders', async () => {
  // Every slider has the range and step of its field in the link format (state.js), so a
  // link's values are ones the sliders can show.
  const page = await open('#data=xor&test=0.05&points=5000&noise=50', 'link-sliders');
  await waitStatus(page, ['idle'], 60_000);
  const sliders = await page.$$eval('input[type=range]', (els) => els.map((el) => ({ id: el.id, min: Number(el.min), max: Number(el.max), step: Number(el.step), value: el.valueAsNumber })));
  for (const s of sliders) {
    const f = NUMBER_FIELDS.find((x) => x.key === s.id);
    check(f && f.step, `slider ${s.id} has no field with a step`);
    check(s.min === f.min && s.max === f.max && s.step === f.step, `slider ${s.id}: [${s.min}, ${s.max}] step ${s.step}; the link allows [${f.min}, ${f.max}] step ${f.step}`);
  }
  const at = Object.fromEntries(sliders.map((s) => [s.id, s.value]));
  check(at.test === 0.05 && at.points === 5000 && at.noise === 50, `sliders show ${JSON.stringify(at)}`);
  const outs = await page.evaluate(() => [document.getElementById('points-out').textContent, document.getElementById('test-out').textContent]);
  check(outs[0] === '5000' && outs[1] === '5 %', `outputs ${outs}`);
  check((await page.$$('#messages .msg')).length === 0, 'warnings for a valid link');
  await shot(page, 'fix-link-sliders', false);
  // A value off the step: moved to the nearest step, said beside the slider and at the top.
  await page.goto(`${env.base}#data=xor&points=437&test=0.333`);
  await waitStatus(page, ['idle'], 60_000);
  const v = await page.evaluate(() => [document.getElementById('points').valueAsNumber, document.getElementById('test').valueAsNumber]);
  check(v[0] === 440 && v[1] === 0.33, `sliders at ${v}`);
  check(/points=440/.test(page.url()) && /test=0.33&/.test(page.url()), `URL ${page.url()}`);
  const e = await fieldError(page, 'points');
  check(e && /437/.test(e.text) && /440/.test(e.text), `no message beside Points: ${e?.text}`);
  await page.close();
  return `${sliders.length} sliders match their link fields; 437 -> 440 with a message`;
});

test('layers-full', async () => {
  const layers = Array.from({ length: 8 }, () => 'd4-relu').join(',');
  const page = await open(`#data=xor&layers=${layers}`, 'layers-full');
  await waitStatus(page, ['idle'], 60_000);
  const s = await page.evaluate(() => {
    const b = document.getElementById('add-dense');
    const note = document.getElementById('layers-full');
    return { disabled: b.disabled, noteShown: !note.hidden && note.getBoundingClientRect().height > 0, text: note.textContent, describedBy: b.getAttribute('aria-describedby') };
  });
  check(s.disabled && s.noteShown, `add disabled ${s.disabled}, note shown ${s.noteShown}`);
  check(/8 layers/.test(s.text) && /remove a layer/.test(s.text), `note: ${s.text}`);
  check(s.describedBy === 'layers-full', 'the button is not described by the note');
  await page.$eval('#add-dense', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'fix-layers-full', false);
  await page.click('#layers li:first-child .remove');
  const after = await page.evaluate(() => ({ disabled: document.getElementById('add-dense').disabled, hidden: document.getElementById('layers-full').hidden }));
  check(!after.disabled && after.hidden, `after removing one: ${JSON.stringify(after)}`);
  await page.close();
  return s.text;
});

test('sgd-option', async () => {
  // Each optimizer's name fits its select at every width the layout has.
  const page = await open('#data=xor', 'sgd-option');
  await waitStatus(page, ['idle'], 60_000);
  const cut = [];
  for (const width of [1920, 1366, 1181, 1000, 761, 600, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const r = await page.$eval('#opt', (el) => {
      const cs = getComputedStyle(el);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20; // the arrow
      return [...el.options].map((o) => ({ text: o.textContent, need: ctx.measureText(o.textContent).width, room }));
    });
    for (const o of r) if (o.need > o.room) cut.push(`${o.text} at ${width} px (${o.need.toFixed(0)} > ${o.room.toFixed(0)})`);
  }
  check(cut.length === 0, `cut: ${cut.join('; ')}`);
  await page.setViewportSize({ width: 1181, height: 900 });
  await page.selectOption('#opt', 'sgd');
  await page.$eval('#opt', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'fix-sgd-option', false);
  await page.close();
  return 'SGD (momentum), Adam, AdamW fit at 7 widths';
});

test('speed', async () => {
  const page = await open('#data=xor&epochs=30', 'speed');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#step-btn');
  await page.waitForFunction(() => document.getElementById('m-step').dataset.value === '1');
  await waitStatus(page, ['paused'], 10_000);
  const one = await page.$eval('#m-speed', (el) => [el.textContent, el.dataset.value ?? '']);
  check(one[0] === '–' && one[1] === '', `Speed after one step: ${one}`);
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 60_000);
  const speed = await metric(page, 'm-speed');
  check(Number.isFinite(speed) && speed > 0, `Speed after training: ${speed}`);
  const steps = await metric(page, 'm-step');
  await shot(page, 'fix-speed', false);
  await page.close();
  return `– after one step, ${Math.round(speed)} items/s after ${steps} steps`;
});

test('done-1366', async () => {
  // The Done message does not wrap or move the layout at 1366 px (nor does the toolbar:
  // "One more epoch" keeps its place while hidden).
  const page = await open('#data=xor&epochs=15', 'done-1366');
  await page.setViewportSize({ width: 1366, height: 768 });
  await waitStatus(page, ['idle'], 60_000);
  const box = () =>
    page.evaluate(() => {
      const s = document.getElementById('status');
      const lh = parseFloat(getComputedStyle(s).lineHeight);
      return { h: s.getBoundingClientRect().height, lh, metricsTop: document.querySelector('.metrics').getBoundingClientRect().top, boundaryTop: document.getElementById('boundary').getBoundingClientRect().top, overflow: s.scrollWidth - s.clientWidth, text: s.textContent };
    });
  const idle = await box();
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 60_000);
  const done = await box();
  check(done.h === idle.h && done.h < 1.6 * done.lh, `status height ${idle.h} -> ${done.h} (line ${done.lh})`);
  check(done.metricsTop === idle.metricsTop, `the metrics moved from ${idle.metricsTop} to ${done.metricsTop}`);
  // Nor do the tiles below it (a Speed of "83,663 items/s" once wrapped to two lines).
  check(done.boundaryTop === idle.boundaryTop, `the decision boundary moved from ${idle.boundaryTop} to ${done.boundaryTop}`);
  check(done.overflow <= 0, `"${done.text}" is cut by ${done.overflow} px`);
  // The final picture is drawn from a real grid (a time budget overrun once gave NaN).
  const grid = await page.$eval('#boundary', (c) => Number(c.dataset.gridSize));
  check(Number.isInteger(grid) && grid >= 50, `the last decision boundary's grid is ${grid}`);
  await shot(page, 'fix-done-1366', false);
  await page.close();
  return `"${done.text}" on one line (${done.h} px)`;
});

test('phone', async () => {
  // 390 x 844: Train and the loss chart in one screen; the confusion matrix's columns all visible.
  const page = await open('#data=circle&epochs=60', 'phone');
  await page.setViewportSize({ width: 390, height: 844 });
  await waitStatus(page, ['idle'], 60_000);
  const visible = () =>
    page.evaluate(() => {
      const inView = (el) => {
        const r = el.getBoundingClientRect();
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth && (top === el || el.contains(top));
      };
      return { train: inView(document.getElementById('train-btn')), loss: inView(document.getElementById('loss-chart')), overflow: document.documentElement.scrollWidth - innerWidth };
    });
  const atLoad = await visible();
  check(atLoad.train && atLoad.overflow <= 0, `at load: ${JSON.stringify(atLoad)}`);
  await shot(page, 'fix-phone-load', false);
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 60_000);
  await page.$eval('#loss-chart', (el) => el.scrollIntoView({ block: 'center' }));
  const scrolled = await visible();
  check(scrolled.train && scrolled.loss, `Train and the loss chart not in one screen: ${JSON.stringify(scrolled)}`);
  await shot(page, 'fix-phone-train-and-loss', false);
  // MNIST's confusion matrix on 10,000 test images: no hidden columns, with the counts of
  // the untrained model and with every cell at 1135 (the largest class of the test set).
  await page.goto(`${env.base}#data=mnist&train=1000&mtest=10000`);
  await waitStatus(page, ['idle'], 90_000);
  await page.waitForFunction(() => document.querySelectorAll('#confusion thead th').length === 11);
  await page.$eval('#confusion', (el) => el.scrollIntoView({ block: 'center' }));
  const measure = (t) => {
    const box = t.closest('.scroll-x');
    const last = t.querySelector('thead th:last-child').getBoundingClientRect();
    const cells = [...t.querySelectorAll('td')];
    return {
      fits: box.scrollWidth <= box.clientWidth,
      lastRight: last.right,
      boxRight: box.getBoundingClientRect().right,
      longest: Math.max(...cells.map((td) => td.textContent.length)),
      clipped: cells.filter((td) => td.scrollWidth > td.clientWidth).length,
    };
  };
  const c = await page.$eval('#confusion', measure);
  check(c.fits && c.lastRight <= c.boxRight + 0.5 && c.clipped === 0, `confusion matrix: ${JSON.stringify(c)}`);
  await shot(page, 'fix-phone-confusion', false);
  const wide = await page.$eval('#confusion', (t, m) => {
    for (const td of t.querySelectorAll('td')) td.textContent = '1135';
    return eval(`(${m})`)(t);
  }, measure.toString());
  check(wide.fits && wide.lastRight <= wide.boxRight + 0.5 && wide.clipped === 0, `confusion matrix with 4-digit counts: ${JSON.stringify(wide)}`);
  const mnist = await visible();
  check(mnist.train, 'Train is off screen at the confusion matrix (the bar is sticky)');
  await page.close();
  return `Train and loss chart in one 390x844 screen; confusion columns 0-9 visible (with the model's counts, up to ${c.longest} digits, and with 4-digit counts)`;
});

/** SafeTensors bytes of float32 tensors {name: {shape, data}}. */
function safetensors(tensors) {
  const header = {};
  let offset = 0;
  const parts = [];
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    const bytes = Buffer.from(new Float32Array(data).buffer);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
    parts.push(bytes);
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, Buffer.from(json), ...parts]);
}

test('boundary-pixels', async () => {
  // The decision boundary at the canvas's device-pixel size (devicePixelRatio 2): models
  // with a steep, known boundary (no hidden layer; weights loaded from a SafeTensors file
  // made here); each canvas pixel near the boundary must have the colour of the model's
  // probability at that pixel's own point of the plane, computed here. Once on (x1, x2) (a
  // line), once on the features x1, x2, x1² (a parabola).
  const hiDpi = await launchBrowser({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 2 });
  try {
    const line = await boundaryPixels(await open('#data=xor&points=20&test=0.5&layers=', 'boundary-pixels', hiDpi.context), {
      name: 'line',
      weights: [0, 0, 110, 70],
      bias: [0, 8],
      logit: (x, y) => 110 * x + 70 * y + 8,
    });
    const parabola = await boundaryPixels(await open('#data=xor&points=20&test=0.5&features=x1,x2,x1sq&layers=', 'boundary-pixels-features', hiDpi.context), {
      name: 'parabola',
      weights: [0, 0, 0, 0, 60, -80],
      bias: [0, 10],
      logit: (x, y) => 60 * y - 80 * x * x + 10,
    });
    return `${line}; ${parabola}`;
  } finally {
    await hiDpi.close();
  }
});

/** One boundary-pixels case: the page's canvas against the model's colours computed here. */
async function boundaryPixels(page, model) {  await waitStatus(page, ['idle'], 60_000);
  // logit(class 1) - logit(class 0) = model.logit(x, y)
  const k = model.weights.length / 2;
  const file = safetensors({ '0.weight': { shape: [2, k], data: model.weights }, '0.bias': { shape: [2], data: model.bias } });
  await page.setInputFiles('#load-input', { name: `${model.name}.safetensors`, mimeType: 'application/octet-stream', buffer: file });
  await page.waitForFunction(() => document.body.dataset.weights === 'loaded', null, { timeout: 20_000 });
  await page.waitForFunction(() => {
    const c = document.getElementById('boundary');
    return c.dataset.gridSize === String(c.width);
  }, null, { timeout: 20_000 });
  await page.waitForTimeout(200);
  const r = await page.$eval('#boundary', (c) => ({
    width: c.width,
    height: c.height,
    css: c.getBoundingClientRect().width - 2, // minus the 1 px border each side
    dpr: devicePixelRatio,
    grid: Number(c.dataset.gridSize),
    // every 3rd pixel of every 3rd row, RGB, base64 (the whole bitmap is 4 MB)
    sample: (() => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let bin = '';
      for (let i = 0; i < c.height; i += 3) for (let j = 0; j < c.width; j += 3) {
        const k = 4 * (i * c.width + j);
        bin += String.fromCharCode(d[k], d[k + 1], d[k + 2]);
      }
      return btoa(bin);
    })(),
  }));
  const sample = Buffer.from(r.sample, 'base64');
  check(r.dpr === 2, `devicePixelRatio ${r.dpr}`);
  check(Math.abs(r.width - r.css * 2) <= 1 && r.height === r.width, `canvas ${r.width}x${r.height} for ${r.css} CSS px at dpr 2`);
  check(r.grid === r.width, `the model was evaluated on a ${r.grid}² grid for a ${r.width}² canvas`);
  // Expected colour of pixel (row i, column j): the grid point at its centre (GRID: [-1.25, 1.25]²).
  const lo = -1.25;
  const hi = 1.25;
  const W = r.width;
  const colour = (x, y) => {
    const p1 = 1 / (1 + Math.exp(-model.logit(x, y)));
    const p0 = 1 - p1;
    const mix = [p0 * 245 + p1 * 8, p0 * 147 + p1 * 119, p0 * 34 + p1 * 189];
    const t = Math.max(0, (Math.max(p0, p1) - 0.5) / 0.5) * 0.6;
    return { p1, rgb: mix.map((m) => 255 + (m - 255) * t) };
  };
  let band = 0;
  let match = 0;
  let coarseMatch = 0;
  const at = (i, j) => [lo + ((j + 0.5) * (hi - lo)) / W, hi - ((i + 0.5) * (hi - lo)) / W];
  // The 50 x 50 grid upscaled, as the page drew it before (bilinear between cell centres).
  const coarse = (i, j) => {
    const n = 50;
    const u = Math.min(n - 1, Math.max(0, ((j + 0.5) / W) * n - 0.5));
    const v = Math.min(n - 1, Math.max(0, ((i + 0.5) / W) * n - 0.5));
    const [j0, i0] = [Math.floor(u), Math.floor(v)];
    const [j1, i1] = [Math.min(n - 1, j0 + 1), Math.min(n - 1, i0 + 1)];
    const c = (ii, jj) => colour(lo + ((jj + 0.5) * (hi - lo)) / n, hi - ((ii + 0.5) * (hi - lo)) / n).rgb;
    const [a, b, cc, d] = [c(i0, j0), c(i0, j1), c(i1, j0), c(i1, j1)];
    const fu = u - j0;
    const fv = v - i0;
    return a.map((_, k) => (a[k] * (1 - fu) + b[k] * fu) * (1 - fv) + (cc[k] * (1 - fu) + d[k] * fu) * fv);
  };
  const perRow = Math.ceil(W / 3);
  for (let i = 0; i < W; i += 3) {
    for (let j = 0; j < W; j += 3) {
      const [x, y] = at(i, j);
      const e = colour(x, y);
      if (e.p1 < 0.03 || e.p1 > 0.97) continue; // the band along the boundary
      band++;
      const k = 3 * ((i / 3) * perRow + j / 3);
      const got = [sample[k], sample[k + 1], sample[k + 2]];
      const near = (rgb) => rgb.every((v, c) => Math.abs(v - got[c]) <= 3);
      if (near(e.rgb)) match++;
      if (near(coarse(i, j))) coarseMatch++;
    }
  }
  check(band > 200, `only ${band} pixels in the band`);
  check(match / band >= 0.9, `${match} of ${band} pixels near the boundary have the model's colour at their own point`);
  await page.$eval('#boundary', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, `fix-boundary-pixels-${model.name}`, false);
  await page.close();
  return `${model.name}: ${r.width}² canvas = ${r.grid}² grid, ${match}/${band} band pixels exact (a 50² grid upscaled would match ${coarseMatch})`;
}

test('malformed-escape', async () => {
  const page = await open('#data=circle&%E9%A=1&lr=%ZZ', 'malformed-escape');
  await waitStatus(page, ['idle'], 60_000);
  const msgs = await page.$eval('#messages', (el) => el.textContent);
  check(msgs.includes('"%E9%A"') && msgs.includes('"%ZZ" of "lr"'), `messages: ${msgs}`);
  check(!msgs.includes('\uFFFD'), `a replacement character in: ${msgs}`);
  check(/data=circle/.test(page.url()) && /lr=0.01/.test(page.url()), `the rest of the link was lost: ${page.url()}`);
  await shot(page, 'fix-malformed-escape', false);
  await page.close();
  return msgs.replace(/×/g, ' | ');
});

test('chart-text', async () => {
  // Each chart has a summary (referenced by the canvas) and a table that follow training.
  const page = await open('#data=xor&epochs=25', 'chart-text');
  await waitStatus(page, ['idle'], 60_000);
  const before = await page.$eval('#loss-summary', (el) => el.textContent);
  check(/No points yet/.test(before), `summary before training: ${before}`);
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 60_000);
  await page.waitForTimeout(400); // the charts' next redraw (at most every 250 ms)
  const t = await page.evaluate(() => ({
    described: document.getElementById('loss-chart').getAttribute('aria-describedby'),
    loss: document.getElementById('loss-summary').textContent,
    acc: document.getElementById('acc-summary').textContent,
    rows: [...document.querySelectorAll('#loss-table tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent)),
    head: [...document.querySelectorAll('#loss-table thead th')].map((c) => c.textContent),
    trainLoss: Number(document.getElementById('m-train-loss').dataset.value),
    testLoss: Number(document.getElementById('m-test-loss').dataset.value),
    testAcc: Number(document.getElementById('m-test-acc').dataset.value),
  }));
  check(t.described === 'loss-summary', 'the loss chart is not described by its summary');
  const trainLast = /Train loss (\d\.\d{4}) at epoch 25\.00/.exec(t.loss);
  const testLast = /Test loss (\d\.\d{4}) at epoch 25\.00/.exec(t.loss);
  check(trainLast && Number(trainLast[1]) === Number(t.trainLoss.toFixed(4)), `summary ${t.loss} vs train loss tile ${t.trainLoss}`);
  check(testLast && Number(testLast[1]) === Number(t.testLoss.toFixed(4)), `summary ${t.loss} vs test loss tile ${t.testLoss}`);
  check(t.acc.includes(`Test accuracy ${(t.testAcc * 100).toFixed(2)} % at epoch 25.00`), `accuracy summary ${t.acc} vs ${t.testAcc}`);
  check(t.head.join('|') === 'Epoch|Train loss|Test loss', `table head ${t.head}`);
  check(t.rows.length >= 2 && t.rows.length <= 12, `${t.rows.length} table rows`);
  check(t.rows[t.rows.length - 1][0] === '25.00', `last row ${t.rows[t.rows.length - 1]}`);
  await page.click('.chart-table summary');
  await page.$eval('#loss-table', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'fix-chart-text', false);
  await page.close();
  return t.loss;
});

run('fix');
