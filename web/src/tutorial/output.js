// Renders a cell's output events (runtime/notebook.js) under the cell, in [data-output]:
// lines, values, tables, live Chart.js line charts, progress bars, links and errors (with
// the KilnError code, message and cell line). outputTextOf() reads the text back the way
// runtime/format.js's outputText() writes it (what the expectations check).
import { Chart, LineController, LineElement, PointElement, LinearScale, Legend, Title, Tooltip } from 'chart.js';
import { errorText, truncatedText } from './runtime/format.js';

Chart.register(LineController, LineElement, PointElement, LinearScale, Legend, Title, Tooltip);

const COLORS = ['#d9480f', '#1c7ed6', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599'];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * One cell's output area.
 */
export class OutputView {
  /** @param {HTMLElement} root the [data-output] element */
  constructor(root) {
    this.root = root;
    this.charts = new Map(); // chart -> {chart, pending: []}
    this.bars = new Map();
    this.frame = 0;
    this.note = null; // the "output truncated" line
  }

  /** Whether an error is shown. */
  hasError() {
    return this.root.querySelector('.out-error') !== null;
  }

  /** Empties the output (a new run). */
  clear() {
    for (const c of this.charts.values()) c.chart.destroy();
    this.charts.clear();
    this.bars.clear();
    this.note = null;
    this.root.textContent = '';
  }

  /** Adds one event. */
  add(ev) {
    switch (ev.type) {
      case 'text': {
        this.root.append(el('div', `out-line level-${ev.level ?? 'log'}`, ev.text));
        break;
      }
      case 'value':
        this.root.append(el('div', 'out-line out-value', ev.text));
        break;
      case 'table':
        this.root.append(this.table(ev));
        break;
      case 'link': {
        const line = el('div', 'out-line out-link');
        const a = el('a', '', ev.text);
        a.href = ev.href;
        // another page (e.g. the playground): a new tab keeps this notebook's state
        a.target = '_blank';
        a.rel = 'noopener';
        line.append(a);
        this.root.append(line);
        break;
      }
      case 'error':
        this.root.append(this.error(ev));
        break;
      case 'truncated':
        // one note, its count updated as more lines are dropped
        if (!this.note) {
          this.note = el('div', 'out-line out-truncated');
          this.root.append(this.note);
        }
        this.note.textContent = truncatedText(ev.count);
        break;
      case 'chart':
        this.chart(ev);
        break;
      case 'chart-push': {
        const c = this.charts.get(ev.chart);
        if (c) {
          c.pending.push(ev);
          this.schedule();
        }
        break;
      }
      case 'progress': {
        const box = el('div', 'out-progress');
        const label = el('span', 'progress-label', ev.label);
        const bar = el('progress');
        bar.max = ev.total > 0 ? ev.total : 1;
        bar.value = 0;
        bar.setAttribute('aria-label', ev.label || 'progress');
        const note = el('span', 'progress-note', `0 / ${ev.total}`);
        note.setAttribute('aria-hidden', 'true'); // the <progress> carries the value; no announcement per batch
        box.append(label, bar, note);
        this.root.append(box);
        this.bars.set(ev.progress, { bar, note, total: ev.total });
        break;
      }
      case 'progress-update': {
        const b = this.bars.get(ev.progress);
        if (b) {
          b.bar.value = Math.min(ev.done, b.bar.max);
          b.note.textContent = `${ev.done} / ${b.total}${ev.note ? ` · ${ev.note}` : ''}`;
        }
        break;
      }
      case 'progress-done': {
        const b = this.bars.get(ev.progress);
        if (b) {
          b.bar.value = b.bar.max;
          b.bar.closest('.out-progress')?.classList.add('done');
        }
        break;
      }
      default:
        break;
    }
  }

  table(ev) {
    const wrap = el('div', 'out-table');
    const t = el('table');
    const head = el('tr');
    for (const c of ev.columns) head.append(el('th', '', c));
    const thead = el('thead');
    thead.append(head);
    const tbody = el('tbody');
    for (const r of ev.rows) {
      const tr = el('tr');
      for (const c of r) tr.append(el('td', '', c));
      tbody.append(tr);
    }
    t.append(thead, tbody);
    wrap.append(t);
    return wrap;
  }

  error(ev) {
    const box = el('div', 'out-error');
    box.setAttribute('role', 'alert');
    box.dataset.code = ev.code ?? '';
    box.dataset.line = ev.line ?? '';
    box.append(el('span', 'out-error-text', errorText(ev)));
    if (ev.hint) box.append(el('div', 'out-hint', ev.hint));
    return box;
  }

  chart(ev) {
    const box = el('div', 'out-chart');
    const canvas = el('canvas');
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${ev.title || 'chart'}: ${ev.series.join(', ')} by ${ev.x}`);
    box.append(canvas);
    this.root.append(box);
    const chart = new Chart(canvas, {
      type: 'line',
      data: {
        datasets: ev.series.map((name, i) => ({
          label: name,
          data: [],
          borderColor: COLORS[i % COLORS.length],
          backgroundColor: COLORS[i % COLORS.length],
          pointRadius: 2,
          borderWidth: 2,
          yAxisID: /acc/i.test(name) ? 'y1' : 'y',
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        scales: {
          x: { type: 'linear', title: { display: true, text: ev.x } },
          y: { type: 'linear', position: 'left' },
          y1: { type: 'linear', position: 'right', display: ev.series.some((s) => /acc/i.test(s)) && ev.series.some((s) => !/acc/i.test(s)), grid: { drawOnChartArea: false } },
        },
        plugins: { title: { display: Boolean(ev.title), text: ev.title }, legend: { display: true } },
      },
    });
    this.charts.set(ev.chart, { chart, series: ev.series, pending: [] });
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      for (const c of this.charts.values()) {
        if (!c.pending.length) continue;
        for (const p of c.pending) {
          for (const [name, v] of Object.entries(p.values)) {
            const i = c.series.indexOf(name);
            if (i >= 0 && Number.isFinite(v)) c.chart.data.datasets[i].data.push({ x: p.x, y: v });
          }
        }
        c.pending = [];
        c.chart.update('none');
      }
    });
  }
}

/**
 * The text of an output element, as runtime/format.js's outputText() writes it: one line
 * per printed line / value / link / error, a table as header + rows with " | ".
 * @param {HTMLElement} root a [data-output] element
 */
export function outputTextOf(root) {
  const lines = [];
  for (const child of root.children) {
    if (child.classList.contains('out-table')) {
      for (const tr of child.querySelectorAll('tr')) lines.push([...tr.children].map((c) => c.textContent).join(' | '));
    } else if (child.classList.contains('out-error')) {
      for (const part of child.children) lines.push(part.textContent); // the error, then its hint
    } else if (child.classList.contains('out-line')) {
      lines.push(child.textContent);
    }
  }
  return lines.join('\n');
}
