// Loss and accuracy charts (Chart.js 4), x axis in epochs.
import {
  Chart,
  LineController,
  LineElement,
  PointElement,
  LinearScale,
  Legend,
  Tooltip,
} from 'chart.js';

Chart.register(LineController, LineElement, PointElement, LinearScale, Legend, Tooltip);

const MAX_POINTS = 1000;
const REDRAW_MS = 250;
const TRAIN_COLOR = '#e8710a';
const TEST_COLOR = '#1967d2';

function makeChart(canvas, title, yOptions) {
  return new Chart(canvas, {
    type: 'line',
    data: {
      datasets: [
        { label: `Train ${title}`, data: [], borderColor: TRAIN_COLOR, backgroundColor: TRAIN_COLOR, borderWidth: 1.5, pointRadius: 0, tension: 0 },
        // Dots while there are few test points (resolved at each draw: a scriptable option).
        { label: `Test ${title}`, data: [], borderColor: TEST_COLOR, backgroundColor: TEST_COLOR, borderWidth: 2, pointRadius: (c) => (c.dataset.data.length > 60 ? 0 : 2), tension: 0 },
      ],
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      parsing: false,
      normalized: true,
      interaction: { mode: 'nearest', intersect: false },
      scales: {
        x: { type: 'linear', title: { display: true, text: 'epoch' }, min: 0, ticks: { maxTicksLimit: 8 } },
        y: { type: 'linear', title: { display: true, text: title }, ...yOptions },
      },
      plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
    },
  });
}

export class Charts {
  /** `onDraw` (optional, set by the page) runs after every redraw. */
  constructor(lossCanvas, accCanvas) {
    this.loss = makeChart(lossCanvas, 'loss', { beginAtZero: true });
    this.acc = makeChart(accCanvas, 'accuracy', { min: 0, max: 1 });
    this.pending = false;
    this.lastDraw = 0;
  }

  clear() {
    for (const c of [this.loss, this.acc]) {
      for (const d of c.data.datasets) d.data = [];
      this.count(c);
      c.update('none');
    }
    this.onDraw?.();
  }

  /** A copy of every curve's points (live.js keeps it for Undo). */
  snapshot() {
    return [this.loss, this.acc].map((c) => c.data.datasets.map((d) => d.data.map((p) => ({ ...p }))));
  }

  /** Puts back the points of snapshot(). */
  restore(snap) {
    [this.loss, this.acc].forEach((c, i) => {
      c.data.datasets.forEach((d, j) => {
        d.data = (snap[i]?.[j] ?? []).map((p) => ({ ...p }));
      });
      this.count(c);
      c.update('none');
    });
    this.onDraw?.(); // the text alternative follows
  }

  /** The number of points of each curve on the canvas (data-train-points, data-test-points). */
  count(chart) {
    chart.canvas.dataset.trainPoints = String(chart.data.datasets[0].data.length);
    chart.canvas.dataset.testPoints = String(chart.data.datasets[1].data.length);
  }

  /** A train point (running mean since the previous one). */
  addTrain(epoch, loss, accuracy) {
    this.push(0, epoch, loss, accuracy);
  }

  /** A test point (an evaluation of the test part). */
  addTest(epoch, loss, accuracy) {
    this.push(1, epoch, loss, accuracy);
  }

  push(index, epoch, loss, accuracy) {
    for (const [chart, y] of [[this.loss, loss], [this.acc, accuracy]]) {
      const ds = chart.data.datasets[index];
      const last = ds.data[ds.data.length - 1];
      if (last && last.x === epoch) last.y = y;
      else ds.data.push({ x: epoch, y });
      // Long runs: keep every other point once there are many (the curve's shape stays).
      if (ds.data.length > MAX_POINTS) ds.data = ds.data.filter((_, i) => i % 2 === 0 || i === ds.data.length - 1);
      this.count(chart);
    }
    this.schedule();
  }

  /**
   * Redraws at most every REDRAW_MS (Chart.js redraws are the page's largest cost while
   * training; points arriving in between are drawn with the next redraw).
   */
  schedule() {
    if (this.pending) return;
    this.pending = true;
    const wait = Math.max(0, REDRAW_MS - (performance.now() - this.lastDraw));
    setTimeout(() => {
      requestAnimationFrame(() => {
        this.pending = false;
        this.lastDraw = performance.now();
        this.loss.update('none');
        this.acc.update('none');
        this.onDraw?.(); // e.g. the text alternative (chart-text.js)
      });
    }, wait);
  }
}
