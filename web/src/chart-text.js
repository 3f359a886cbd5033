// The charts' text alternative (issue 18): under each chart a one-line summary of every
// curve (last value and epoch, best value) and a table of the curves at up to TABLE_ROWS
// evenly spaced points, both rewritten whenever the chart is redrawn. Works for any number
// of labelled datasets (the Race adds its set-ups' curves to the same charts).

const TABLE_ROWS = 12;

/**
 * The summary of one chart's datasets.
 * @param {{label: string, data: {x: number, y: number}[]}[]} datasets
 * @param {(v: number) => string} fmt formats a value
 * @param {'min' | 'max'} better which end is the best value
 * @returns {string} e.g. "Train loss 0.0206 at epoch 20.00 (lowest 0.0199 at epoch 19.50). Test loss …"
 */
export function summarise(datasets, fmt, better) {
  const parts = [];
  for (const ds of datasets) {
    const pts = ds.data.filter((p) => Number.isFinite(p.y));
    if (pts.length === 0) continue;
    const last = pts[pts.length - 1];
    let best = pts[0];
    for (const p of pts) if (better === 'min' ? p.y < best.y : p.y > best.y) best = p;
    parts.push(`${ds.label} ${fmt(last.y)} at epoch ${last.x.toFixed(2)} (${better === 'min' ? 'lowest' : 'highest'} ${fmt(best.y)} at epoch ${best.x.toFixed(2)}).`);
  }
  return parts.length ? parts.join(' ') : 'No points yet: train to draw the curves.';
}

/**
 * Rows for the table: up to `rows` epochs evenly spaced over the epochs of all curves
 * (the first and the last included), each with every dataset's point nearest to that epoch
 * (or null when it has none within half a spacing).
 * @returns {{epoch: number, values: (number | null)[]}[]}
 */
export function tableRows(datasets, rows = TABLE_ROWS) {
  const all = datasets.map((ds) => ds.data.filter((p) => Number.isFinite(p.y)));
  const xs = [...new Set(all.flat().map((p) => p.x))].sort((a, b) => a - b);
  if (xs.length === 0) return [];
  const take = Math.min(rows, xs.length);
  const picked = [];
  for (let i = 0; i < take; i++) picked.push(xs[Math.round((i * (xs.length - 1)) / Math.max(1, take - 1))]);
  const span = take > 1 ? (picked[take - 1] - picked[0]) / (take - 1) : Infinity;
  return picked.map((x) => ({
    epoch: x,
    values: all.map((pts) => {
      let near = null;
      for (const p of pts) if (near === null || Math.abs(p.x - x) < Math.abs(near.x - x)) near = p;
      return near && Math.abs(near.x - x) <= span / 2 + 1e-9 ? near.y : null;
    }),
  }));
}

/** Keeps a chart's summary paragraph and table in step with its datasets. */
export class ChartText {
  /**
   * @param {object} chart a Chart.js chart
   * @param {HTMLElement} summary the paragraph for the summary
   * @param {HTMLTableElement} table the table
   * @param {{fmt: (v: number) => string, better: 'min' | 'max'}} opts
   */
  constructor(chart, summary, table, opts) {
    Object.assign(this, { chart, summary, table, opts });
  }

  update() {
    const datasets = this.chart.data.datasets;
    const text = summarise(datasets, this.opts.fmt, this.opts.better);
    if (this.summary.textContent !== text) this.summary.textContent = text;
    const head = ['Epoch', ...datasets.map((d) => d.label)];
    const rows = tableRows(datasets);
    const cell = (tag, text, scope) => {
      const c = document.createElement(tag);
      c.textContent = text;
      if (scope) c.scope = scope;
      return c;
    };
    const thead = document.createElement('thead');
    const hr = document.createElement('tr');
    hr.append(...head.map((h) => cell('th', h, 'col')));
    thead.append(hr);
    const tbody = document.createElement('tbody');
    for (const r of rows) {
      const tr = document.createElement('tr');
      tr.append(cell('th', r.epoch.toFixed(2), 'row'), ...r.values.map((v) => cell('td', v === null ? '–' : this.opts.fmt(v))));
      tbody.append(tr);
    }
    this.table.replaceChildren(thead, tbody);
  }
}
