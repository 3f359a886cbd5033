// The MNIST "Look inside" views in ConvNetJS's spirit: the drawn digit through the network
// (every layer's activations, from the engine's forwardAll), its saliency |∂ logit / ∂ pixel|
// (the engine's autodiff), the convolution filters (and a dense first layer's weights) as
// images and a histogram of each layer's weights. Numbers come from the worker
// (inside-probe.js); this file draws them.
import { paintMap, diverging, hot, maxAbs, range, mapCanvas, fmt, el } from './inside-draw.js';

const SKIP = new Set(['reshape', 'flatten', 'dropout']); // same values as the layer before (eval mode)
const MAX_MAPS = 32; // feature maps shown per layer
const MAX_FILTERS = 16; // filters (and input channels) shown per conv layer

export class MnistInside {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.acts = el('section', 'im-acts');
    this.acts.setAttribute('aria-labelledby', 'im-h-acts');
    const ha = el('h4', '', 'The drawn digit, layer by layer');
    ha.id = 'im-h-acts';
    this.actsHint = el('p', 'hint', 'Draw a digit (or use a test digit) to see what each layer computes from it.');
    this.actsBody = el('div', 'im-acts-body');
    this.acts.append(ha, this.actsHint, this.actsBody);
    this.filters = el('section', 'im-filters');
    const hf = el('h4', '', 'Filters: what the first layers look for');
    this.filtersBody = el('div', 'im-filters-body');
    this.filters.append(hf, this.filtersBody);
    this.hists = el('section', 'im-hists');
    const hh = el('h4', '', 'Weight histograms');
    this.histsBody = el('div', 'im-hists-body');
    this.hists.append(hh, el('p', 'hint', 'Each layer’s weights: how many fall in each bin from the smallest to the largest.'), this.histsBody);
    root.append(this.acts, this.filters, this.hists);
    this.inspections = 0;
  }

  clear() {
    this.actsBody.replaceChildren();
    this.filtersBody.replaceChildren();
    this.histsBody.replaceChildren();
    this.filters.hidden = true;
    this.actsHint.hidden = false;
    this.root.dataset.inspections = String((this.inspections = 0));
  }

  /** No drawing any more. */
  clearDrawing() {
    this.actsBody.replaceChildren();
    this.actsHint.hidden = false;
  }

  /**
   * Shows an inspectProbe: the digit, its saliency and each layer's activations.
   * @param {{outputs: object[], saliency: {predicted: number, map: Float32Array}}} m
   * @param {Float32Array} grey the drawn 28 x 28 image in [0, 1]
   */
  showInspection(m, grey) {
    this.actsHint.hidden = true;
    const rows = [];
    // input and saliency
    const head = el('div', 'im-row im-input');
    const input = mapCanvas(56, 56, 'The drawn digit as the model sees it (28 × 28)', 'im-digit');
    paintMap(input, grey, { w: 28, h: 28, color: (v) => [v * 255, v * 255, v * 255] });
    const sal = m.saliency.map;
    const smax = maxAbs(sal);
    let sum = 0;
    for (const v of sal) sum += v;
    const salCanvas = mapCanvas(84, 84, `Saliency of the predicted digit ${m.saliency.predicted}: |∂ logit / ∂ pixel|, largest ${fmt(smax)}, mean ${fmt(sum / sal.length)}; bright pixels change the prediction most`, 'im-saliency');
    paintMap(salCanvas, sal, { w: 28, h: 28, color: (v) => hot(v / smax) });
    salCanvas.dataset.predicted = String(m.saliency.predicted);
    salCanvas.dataset.max = String(smax);
    salCanvas.dataset.map = Array.from(sal, (v) => v.toPrecision(4)).join(',');
    const salFig = el('figure', 'im-fig');
    salFig.append(salCanvas, el('figcaption', '', `Saliency for “${m.saliency.predicted}”: |∂ logit / ∂ pixel|`));
    const inFig = el('figure', 'im-fig');
    inFig.append(input, el('figcaption', '', 'Input'));
    head.append(inFig, salFig);
    rows.push(head);
    for (const o of m.outputs) {
      if (SKIP.has(o.type)) continue;
      rows.push(this.activationRow(o, m.outputs.length));
    }
    this.actsBody.replaceChildren(...rows);
    this.inspections++;
    this.root.dataset.inspections = String(this.inspections);
  }

  /** One layer's activations: feature maps [1, C, H, W] or units [1, U]. */
  activationRow(o, count) {
    const row = el('div', 'im-row');
    row.dataset.layer = String(o.index);
    row.dataset.type = o.type;
    row.dataset.shape = o.shape.slice(1).join('x');
    const [lo, hi] = range(o.data);
    let sum = 0;
    for (const v of o.data) sum += v;
    row.dataset.sum = String(sum);
    const s = maxAbs(o.data);
    const color = (v) => diverging(v / s);
    const last = o.index === count - 1;
    if (last) row.dataset.values = Array.from(o.data, String).join(',');
    const shape = o.shape.slice(1);
    const label = el('div', 'im-label', `${o.index} · ${o.type}${last ? ' (logits)' : ''} [${shape.join('×')}]`);
    label.title = `from ${fmt(lo)} to ${fmt(hi)}`;
    row.append(label);
    const maps = el('div', 'im-maps');
    if (shape.length === 3) {
      const [C, H, W] = shape;
      const scale = Math.max(1, Math.round(48 / W));
      for (let c = 0; c < Math.min(C, MAX_MAPS); c++) {
        const cv = mapCanvas(W * scale, H * scale, `${o.type} layer ${o.index}, channel ${c + 1}`);
        paintMap(cv, o.data, { w: W, h: H, start: c * H * W, color });
        maps.append(cv);
      }
      if (C > MAX_MAPS) maps.append(el('span', 'hint', `+${C - MAX_MAPS} more`));
    } else {
      const U = shape[0];
      const cols = last ? U : Math.ceil(Math.sqrt(U * 4));
      const rowsN = Math.ceil(U / cols);
      const padded = new Float32Array(cols * rowsN);
      padded.set(o.data.subarray(0, U));
      const cell = last ? 14 : Math.max(4, Math.min(10, Math.floor(220 / cols)));
      const cv = mapCanvas(cols * cell, rowsN * cell, `${o.type} layer ${o.index}: ${U} units from ${fmt(lo)} to ${fmt(hi)}`);
      paintMap(cv, padded, { w: cols, h: rowsN, color });
      if (last) {
        // the output layer: one cell per class, labelled
        const box = el('div', 'im-logits');
        const labels = el('div', 'im-logit-labels');
        labels.setAttribute('aria-hidden', 'true');
        for (let c = 0; c < U; c++) labels.append(el('span', '', String(c)));
        cv.setAttribute('aria-label', `logits: ${Array.from(o.data, (v, c) => `${c}: ${fmt(v)}`).join(', ')}`);
        box.append(cv, labels);
        maps.append(box);
      } else {
        maps.append(cv);
      }
    }
    row.append(maps);
    return row;
  }

  /** Shows a weightProbe: conv filters and histograms. */
  showWeights(w) {
    const filterRows = [];
    const histRows = [];
    for (const l of w.layers) {
      if (l.type === 'conv2d' && l.filters) filterRows.push(this.filterRow(l));
      if (l.templates) filterRows.push(this.templateRow(l));
      histRows.push(this.histRow(l));
    }
    this.filters.hidden = filterRows.length === 0;
    this.filtersBody.replaceChildren(...filterRows);
    this.histsBody.replaceChildren(...histRows);
  }

  filterRow(l) {
    const [O, I, K, K2] = l.shape;
    const row = el('div', 'im-row');
    row.append(el('div', 'im-label', `${l.param} · conv2d [${l.shape.join('×')}]`));
    const grid = el('div', 'im-filter-grid');
    const s = maxAbs(l.filters);
    const cell = I === 1 ? Math.max(4, Math.floor(28 / K)) : 3;
    for (let o = 0; o < Math.min(O, MAX_FILTERS); o++) {
      // one filter: its input channels side by side
      const ins = Math.min(I, MAX_FILTERS);
      const img = new Float32Array(ins * (K2 + 1) * K).fill(0);
      for (let i = 0; i < ins; i++) {
        for (let y = 0; y < K; y++) for (let x = 0; x < K2; x++) img[y * ins * (K2 + 1) + i * (K2 + 1) + x] = l.filters[((o * I + i) * K + y) * K2 + x];
      }
      const cv = mapCanvas(ins * (K2 + 1) * cell, K * cell, `filter ${o + 1} of layer ${l.param}: ${ins} input channel${ins > 1 ? 's' : ''} of ${K}×${K2}`);
      paintMap(cv, img, { w: ins * (K2 + 1), h: K, color: (v) => diverging(v / s) });
      grid.append(cv);
    }
    if (O > MAX_FILTERS) grid.append(el('span', 'hint', `+${O - MAX_FILTERS} more`));
    row.append(grid);
    return row;
  }

  /** A dense layer on the pixels: each shown unit's 784 weights as a 28 x 28 image. */
  templateRow(l) {
    const row = el('div', 'im-row');
    row.append(el('div', 'im-label', `${l.param} · linear [${l.shape.join('×')}]: first ${l.templates.length / 784} units`));
    const grid = el('div', 'im-filter-grid im-templates');
    const s = maxAbs(l.templates);
    for (let u = 0; u < l.templates.length / 784; u++) {
      const cv = mapCanvas(56, 56, `weights of unit ${u + 1} of layer ${l.param} as a 28 × 28 image`);
      paintMap(cv, l.templates, { w: 28, h: 28, start: u * 784, color: (v) => diverging(v / s) });
      grid.append(cv);
    }
    row.append(grid);
    return row;
  }

  histRow(l) {
    const h = l.hist;
    const row = el('div', 'im-row im-hist');
    row.dataset.layer = String(l.param);
    const W = 180;
    const H = 48;
    const cv = mapCanvas(W, H, `Histogram of layer ${l.param}'s ${h.counts.length} bins from ${fmt(h.min)} to ${fmt(h.max)}: ${Array.from(h.counts).join(', ')}`, 'im-hist-canvas');
    const ctx = cv.getContext('2d');
    const peak = Math.max(1, ...h.counts);
    const bw = W / h.counts.length;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    h.counts.forEach((c, b) => {
      const mid = h.min + ((b + 0.5) / h.counts.length) * (h.max - h.min);
      const bh = (c / peak) * (H - 2);
      ctx.fillStyle = `rgb(${diverging(mid / Math.max(Math.abs(h.min), Math.abs(h.max), 1e-12)).map(Math.round).join(',')})`;
      ctx.fillRect(b * bw + 0.5, H - bh, bw - 1, bh);
    });
    row.dataset.counts = Array.from(h.counts).join(',');
    const n = h.counts.reduce((a, c) => a + c, 0);
    const text = el('div', 'im-hist-text');
    text.append(
      el('div', 'im-label', `${l.param} · ${l.type} weight [${l.shape.join('×')}]`),
      el('div', 'hint', `${n.toLocaleString('en-US')} weights, ${fmt(h.min)} to ${fmt(h.max)}, mean ${fmt(h.mean)}, std ${fmt(h.std)}${l.biasHist ? `; bias ${fmt(l.biasHist.min)} to ${fmt(l.biasHist.max)}` : ''}`),
    );
    row.append(cv, text);
    return row;
  }
}
