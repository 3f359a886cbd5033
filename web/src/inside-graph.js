// The network graph of a toy model, in TensorFlow Playground's style: inputs -> hidden
// neurons -> outputs, each neuron a small heat map of what it computes over the plane (its
// activation's output, from the engine's forwardAll), edges coloured by the weight's sign
// and sized by |w|. Hover or keyboard focus on a neuron shows its values (and its map,
// large, beside the graph); hover on an edge shows its weight. A text summary and a table of
// every shown weight and bias are the graph's text alternative.
import { paintMap, diverging, divergingCss, maxAbs, range, mapCanvas, fmt, el } from './inside-draw.js';

const NODE = 40; // px, a neuron's heat map
const GAP = 8; // px between neurons of a column
const TOP = 34; // px for the column titles
const SVG_NS = 'http://www.w3.org/2000/svg';

const ACT_NAMES = { linear: 'linear', leakyRelu: 'leaky ReLU', relu: 'ReLU', tanh: 'tanh', sigmoid: 'sigmoid', gelu: 'GELU', silu: 'SiLU' };

/** Edge width in px for a weight (TF Playground: width grows with |w|, clamped). */
export const edgeWidth = (w) => 0.6 + Math.min(Math.abs(w), 3) * 1.4;

export class NetworkGraph {
  /** @param {HTMLElement} root where the graph, its detail view and its text go */
  constructor(root) {
    this.root = root;
    this.key = '';
    this.data = null;
    this.focus = null; // {layer, unit} shown large
    this.box = el('div', 'ig-box');
    this.graph = el('div', 'ig-graph');
    this.graph.setAttribute('role', 'group');
    this.svg = document.createElementNS(SVG_NS, 'svg');
    this.svg.classList.add('ig-edges');
    this.svg.setAttribute('aria-hidden', 'true');
    this.graph.append(this.svg);
    this.tip = el('div', 'ig-tip');
    this.tip.setAttribute('role', 'tooltip');
    this.tip.id = 'ig-tip';
    this.tip.hidden = true;
    this.detail = el('figure', 'ig-detail');
    this.detailCanvas = mapCanvas(160, 160, '', 'ig-detail-map');
    this.detailCap = el('figcaption', 'ig-detail-cap');
    this.detail.append(this.detailCanvas, this.detailCap);
    this.box.append(this.graph, this.detail);
    this.summary = el('p', 'ig-summary hint');
    this.summary.id = 'ig-summary';
    this.table = el('details', 'ig-table');
    this.table.append(el('summary', '', 'Weights and biases as text'));
    this.tableBody = el('div', 'ig-table-body');
    this.table.append(this.tableBody);
    this.table.addEventListener('toggle', () => this.renderTable());
    root.append(this.box, this.tip, this.summary, this.table);
    this.graph.addEventListener('pointerleave', () => this.hideTip());
  }

  /** Forgets the model (a new set-up). */
  clear() {
    this.data = null;
    this.key = '';
    this.focus = null;
    for (const n of [...this.graph.querySelectorAll('.ig-node, .ig-col, .ig-more')]) n.remove();
    this.svg.replaceChildren();
    this.tableBody.replaceChildren();
    this.summary.textContent = 'The graph appears when the model is ready.';
    this.detailCap.textContent = '';
    this.hideTip();
  }

  /**
   * Shows a toyProbe (inside-probe.js) of the current model.
   * @param {object} toy {size, inputs, layers}
   * @param {{step: number, epoch: number, classes: number}} meta
   */
  update(toy, meta) {
    this.data = toy;
    this.meta = meta;
    const key = `${toy.inputs.map((i) => i.name).join(',')}|${toy.layers.map((l) => `${l.units}:${l.shown}:${l.act}`).join(',')}`;
    if (key !== this.key) this.build(toy);
    this.key = key;
    this.paint();
    this.root.dataset.step = String(meta.step);
  }

  /** The columns of neurons: the inputs, then each block. */
  columns(toy) {
    const cols = [{ title: 'Input', sub: '', units: toy.inputs.length, shown: toy.inputs.length }];
    toy.layers.forEach((l, b) => {
      const last = b === toy.layers.length - 1;
      // several outputs are logits (classification); one is the prediction itself (regression)
      cols.push({
        title: last ? 'Output' : `Hidden ${b + 1}`,
        sub: last ? (l.units > 1 ? 'logits' : '') : (ACT_NAMES[l.act] ?? l.act),
        units: l.units,
        shown: l.shown,
      });
    });
    return cols;
  }

  build(toy) {
    for (const n of [...this.graph.querySelectorAll('.ig-node, .ig-col, .ig-more')]) n.remove();
    this.svg.replaceChildren();
    const cols = this.columns(toy);
    const maxShown = Math.max(...cols.map((c) => c.shown));
    const height = TOP + maxShown * (NODE + GAP) + 18;
    // As wide as the section allows beside the large map (160 px), at least 36 px between columns.
    const room = (this.root.clientWidth || 560) - 160 - 16;
    const width = Math.max(cols.length * (NODE + 36), Math.min(room, cols.length * (NODE + 90)));
    this.graph.style.height = `${height}px`;
    this.graph.style.width = `${width}px`;
    this.svg.style.width = `${width}px`;
    this.svg.style.height = `${height}px`;
    this.svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    this.svg.setAttribute('width', String(width));
    this.svg.setAttribute('height', String(height));
    const step = cols.length > 1 ? (width - NODE - 8) / (cols.length - 1) : 0;
    this.pos = cols.map((c, ci) => {
      const x = 4 + ci * step;
      const y0 = TOP + ((maxShown - c.shown) * (NODE + GAP)) / 2;
      return Array.from({ length: c.shown }, (_, u) => ({ x, y: y0 + u * (NODE + GAP) }));
    });
    this.graph.setAttribute('aria-label', `Network graph: ${cols.map((c) => `${c.title}${c.sub ? ` ${c.sub}` : ''} (${c.units})`).join(', ')}. Focus a neuron for its values; arrow keys move between neurons.`);
    this.graph.setAttribute('aria-describedby', 'ig-summary');
    this.nodes = [];
    this.edges = [];
    cols.forEach((c, ci) => {
      const title = el('div', 'ig-col', c.title);
      if (c.sub) title.append(el('span', '', c.sub));
      title.style.left = `${this.pos[ci][0]?.x ?? 4 + ci * step}px`;
      this.graph.append(title);
      if (c.units > c.shown) {
        const more = el('div', 'ig-more', `+${c.units - c.shown} more`);
        more.style.left = `${this.pos[ci][0].x}px`;
        more.style.top = `${TOP + maxShown * (NODE + GAP) - 2}px`;
        this.graph.append(more);
      }
      // edges into this column
      if (ci > 0) {
        const lay = toy.layers[ci - 1];
        const before = this.pos[ci - 1].length;
        for (let u = 0; u < lay.shown; u++) {
          for (let j = 0; j < before; j++) {
            const a = this.pos[ci - 1][j];
            const b = this.pos[ci][u];
            const x1 = a.x + NODE;
            const y1 = a.y + NODE / 2;
            const x2 = b.x;
            const y2 = b.y + NODE / 2;
            const mx = (x1 + x2) / 2;
            const d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
            const path = document.createElementNS(SVG_NS, 'path');
            path.setAttribute('d', d);
            path.classList.add('ig-edge');
            const hit = document.createElementNS(SVG_NS, 'path');
            hit.setAttribute('d', d);
            hit.classList.add('ig-hit');
            const edge = { layer: ci, unit: u, from: j, path };
            hit.addEventListener('pointerenter', (ev) => this.showEdge(edge, ev));
            hit.addEventListener('pointermove', (ev) => this.placeTip(ev.clientX, ev.clientY));
            hit.addEventListener('pointerleave', () => this.hideTip());
            this.svg.append(path);
            this.edges.push({ ...edge, hit });
          }
        }
      }
    });
    // hit paths above the visible ones
    for (const e of this.edges) this.svg.append(e.hit);
    cols.forEach((c, ci) => {
      this.pos[ci].forEach((p, u) => {
        const node = el('div', 'ig-node');
        node.tabIndex = ci === 0 && u === 0 ? 0 : -1; // one tab stop; arrow keys move (roving tabindex)
        node.style.left = `${p.x}px`;
        node.style.top = `${p.y}px`;
        node.dataset.layer = String(ci);
        node.dataset.unit = String(u);
        node.setAttribute('role', 'img');
        node.setAttribute('aria-describedby', 'ig-tip');
        const canvas = mapCanvas(NODE, NODE, '');
        canvas.removeAttribute('role');
        node.append(canvas);
        const n = { layer: ci, unit: u, node, canvas };
        node.addEventListener('pointerenter', () => this.showNode(n, node));
        node.addEventListener('pointerleave', () => this.hideTip());
        node.addEventListener('focus', () => {
          for (const m of this.nodes) m.node.tabIndex = m === n ? 0 : -1;
          this.showNode(n, node);
        });
        node.addEventListener('keydown', (ev) => this.move(n, ev));
        node.addEventListener('blur', () => this.hideTip());
        this.graph.append(node);
        this.nodes.push(n);
      });
    });
  }

  /** Arrow keys: up / down within a layer, left / right to the previous / next layer. */
  move(n, ev) {
    const d = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0], Home: [0, -1e9], End: [0, 1e9] }[ev.key];
    if (!d) return;
    ev.preventDefault();
    const layer = Math.max(0, Math.min(this.pos.length - 1, n.layer + d[0]));
    const count = this.pos[layer].length;
    const unit = d[0] !== 0 ? Math.min(count - 1, Math.round((n.unit / Math.max(1, this.pos[n.layer].length - 1)) * (count - 1))) : Math.max(0, Math.min(count - 1, n.unit + d[1]));
    this.nodes.find((m) => m.layer === layer && m.unit === unit)?.node.focus();
  }

  /** The numbers of neuron (layer, unit): layer 0 = inputs. */
  neuron(layer, unit) {
    const toy = this.data;
    const n = toy.size * toy.size;
    if (layer === 0) {
      const i = toy.inputs[unit];
      return { name: i.name, values: i.values, start: 0, n, bias: null, weights: null, act: null };
    }
    const l = toy.layers[layer - 1];
    const before = layer === 1 ? toy.inputs.length : toy.layers[layer - 2].shown;
    const last = layer === toy.layers.length;
    return {
      name: last ? (l.units > 1 ? `output ${unit + 1}` : 'output') : `neuron ${unit + 1} of hidden layer ${layer}`,
      values: l.values,
      start: unit * n,
      n,
      bias: l.bias[unit],
      weights: l.weight.subarray(unit * before, (unit + 1) * before),
      act: last ? (l.units > 1 ? 'logit' : 'linear') : l.act,
    };
  }

  paint() {
    const toy = this.data;
    const S = toy.size;
    for (const n of this.nodes) {
      const v = this.neuron(n.layer, n.unit);
      const s = maxAbs(v.values, v.start, v.n);
      paintMap(n.canvas, v.values, { w: S, h: S, start: v.start, color: (x) => diverging(x / s), smooth: true });
      const [lo, hi] = range(v.values, v.start, v.n);
      const d = n.node.dataset;
      d.min = String(lo);
      d.max = String(hi);
      d.corners = [0, S - 1, S * (S - 1), S * S - 1].map((i) => String(v.values[v.start + i])).join(',');
      if (v.bias !== null) {
        d.bias = String(v.bias);
        d.weights = Array.from(v.weights, String).join(',');
      }
      n.node.setAttribute('aria-label', this.describe(v, lo, hi));
    }
    for (const e of this.edges) {
      const w = toy.layers[e.layer - 1].weight[e.unit * this.pos[e.layer - 1].length + e.from];
      e.path.setAttribute('stroke', divergingCss(w));
      e.path.setAttribute('stroke-width', edgeWidth(w).toFixed(2));
      e.path.dataset.weight = String(w);
    }
    const f = this.focus ?? { layer: toy.layers.length, unit: 0 };
    this.paintDetail(f.layer, f.unit);
    const all = toy.layers.flatMap((l) => Array.from(l.weight));
    const [wlo, whi] = range(all);
    const shownNote = toy.layers.some((l) => l.units > l.shown) ? ` (the first ${toy.layers[0].shown} of each layer shown)` : '';
    this.summary.textContent = `${toy.inputs.length} inputs (${toy.inputs.map((i) => i.name).join(', ')}) → ${toy.layers
      .map((l, b) => (b === toy.layers.length - 1 ? `${l.units} output${l.units > 1 ? 's' : ''}` : `${l.units} ${ACT_NAMES[l.act] ?? l.act}`))
      .join(' → ')}${shownNote}. Step ${this.meta.step}: weights shown from ${fmt(wlo)} to ${fmt(whi)}. Orange is negative, blue positive; a neuron's map is its output over the plane.`;
    if (this.table.open) this.renderTable();
    if (!this.tip.hidden && this.tipFor) this.tipFor();
  }

  describe(v, lo, hi) {
    const head = `${v.name}${v.act ? ` (${v.act})` : ''}: output from ${fmt(lo)} to ${fmt(hi)} over the plane`;
    if (v.bias === null) return head;
    return `${head}; bias ${fmt(v.bias)}; incoming weights ${Array.from(v.weights, fmt).join(', ')}`;
  }

  paintDetail(layer, unit) {
    const v = this.neuron(layer, unit);
    const S = this.data.size;
    const s = maxAbs(v.values, v.start, v.n);
    paintMap(this.detailCanvas, v.values, { w: S, h: S, start: v.start, color: (x) => diverging(x / s), smooth: true });
    const [lo, hi] = range(v.values, v.start, v.n);
    this.detailCap.textContent = `${v.name[0].toUpperCase()}${v.name.slice(1)}: ${fmt(lo)} to ${fmt(hi)}${v.bias !== null ? `, bias ${fmt(v.bias)}` : ''}`;
    this.detailCanvas.setAttribute('aria-label', `Large map of ${this.describe(v, lo, hi)}`);
  }

  showNode(n, node) {
    this.focus = { layer: n.layer, unit: n.unit };
    this.tipFor = () => {
      const v = this.neuron(n.layer, n.unit);
      const [lo, hi] = range(v.values, v.start, v.n);
      this.tip.textContent = this.describe(v, lo, hi);
    };
    if (!this.data) return;
    this.tipFor();
    this.paintDetail(n.layer, n.unit);
    const r = node.getBoundingClientRect();
    this.tip.hidden = false;
    this.placeTip(r.right + 6, r.top);
    this.root.dataset.tip = 'node';
  }

  showEdge(e, ev) {
    this.tipFor = () => {
      const w = Number(e.path.dataset.weight);
      const from = e.layer === 1 ? this.data.inputs[e.from].name : `neuron ${e.from + 1} of hidden layer ${e.layer - 1}`;
      const to = this.neuron(e.layer, e.unit).name;
      this.tip.textContent = `Weight ${fmt(w)} from ${from} to ${to}`;
    };
    this.tipFor();
    this.tip.hidden = false;
    this.placeTip(ev.clientX, ev.clientY);
    this.root.dataset.tip = 'edge';
  }

  placeTip(x, y) {
    const box = this.root.getBoundingClientRect();
    this.tip.style.left = `${Math.min(x - box.left + 12, box.width - 220)}px`;
    this.tip.style.top = `${y - box.top + 12}px`;
  }

  hideTip() {
    this.tip.hidden = true;
    this.tipFor = null;
    delete this.root.dataset.tip;
  }

  /** The text alternative: per layer, each shown neuron's bias and incoming weights. */
  renderTable() {
    if (!this.table.open || !this.data) return;
    const toy = this.data;
    const out = [];
    toy.layers.forEach((l, b) => {
      const before = b === 0 ? toy.inputs.map((i) => i.name) : Array.from({ length: toy.layers[b - 1].shown }, (_, j) => `h${b}.${j + 1}`);
      const last = b === toy.layers.length - 1;
      const t = el('table', 'ig-weights');
      t.append(el('caption', '', last ? `Output layer${l.units > 1 ? ' (logits)' : ''}` : `Hidden layer ${b + 1} (${ACT_NAMES[l.act] ?? l.act})`));
      const head = el('tr');
      head.append(el('th', '', 'Neuron'), el('th', '', 'Bias'), ...before.map((n) => el('th', '', `w from ${n}`)));
      head.querySelectorAll('th').forEach((th) => th.setAttribute('scope', 'col'));
      const thead = el('thead');
      thead.append(head);
      const tbody = el('tbody');
      t.append(thead, tbody);
      for (let u = 0; u < l.shown; u++) {
        const tr = el('tr');
        const th = el('th', '', last ? `out ${u + 1}` : `h${b + 1}.${u + 1}`);
        th.setAttribute('scope', 'row');
        tr.append(th, el('td', '', fmt(l.bias[u])));
        for (let j = 0; j < before.length; j++) tr.append(el('td', '', fmt(l.weight[u * before.length + j])));
        tbody.append(tr);
      }
      out.push(t);
    });
    this.tableBody.replaceChildren(...out);
  }
}
