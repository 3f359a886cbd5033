// Drawing of the playground's outputs: the decision-boundary heat map with the points,
// the grid of MNIST test digits, the confusion matrix and the class-probability bars.

import { CLASS_COLORS, cellColor, pointColor } from './heatmap.js';

export { CLASS_COLORS };

/**
 * Paints the heat map (heatmap.js's colours: class probabilities, or the regression output
 * on TF Playground's scale; discretized on request); then the training points, and the
 * test points (dark outline) when showTest.
 * @param {HTMLCanvasElement} canvas
 * @param {Float32Array} probs [size * size, classes] from the grid of boundaryGrid()
 * @param {{size: number, lo: number, hi: number, classes: number, task?: string, discretize?: boolean, showTest?: boolean}} grid
 * @param {object} view the worker's toy view (trainX/Y, testX/Y)
 */
export function drawBoundary(canvas, probs, grid, view) {
  const ctx = canvas.getContext('2d');
  const { size, lo, hi } = grid;
  const W = canvas.width;
  const H = canvas.height;
  if (probs) {
    const img = new ImageData(size, size);
    const rgb = [0, 0, 0];
    for (let i = 0; i < size * size; i++) {
      cellColor(probs, i, grid, rgb);
      img.data[4 * i] = rgb[0];
      img.data[4 * i + 1] = rgb[1];
      img.data[4 * i + 2] = rgb[2];
      img.data[4 * i + 3] = 255;
    }
    const off = new OffscreenCanvas(size, size);
    off.getContext('2d').putImageData(img, 0, 0);
    // Discretized: hard edges between the decisions; else a smooth blend.
    ctx.imageSmoothingEnabled = !grid.discretize;
    ctx.drawImage(off, 0, 0, W, H);
  } else {
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
  }
  // axes
  const sx = (x) => ((x - lo) / (hi - lo)) * W;
  const sy = (y) => ((hi - y) / (hi - lo)) * H;
  ctx.strokeStyle = 'rgba(0,0,0,0.15)';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(sx(0), 0);
  ctx.lineTo(sx(0), H);
  ctx.moveTo(0, sy(0));
  ctx.lineTo(W, sy(0));
  ctx.stroke();
  if (!view) return;
  const radius = Math.max(2.5, W / 110);
  const dots = (x, y, stroke) => {
    ctx.strokeStyle = stroke;
    ctx.lineWidth = 1.2;
    for (let i = 0; i < y.length; i++) {
      ctx.fillStyle = pointColor(y[i], view.task);
      ctx.beginPath();
      ctx.arc(sx(x[2 * i]), sy(x[2 * i + 1]), radius, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
  };
  dots(view.trainX, view.trainY, '#fff');
  if (grid.showTest ?? true) dots(view.testX, view.testY, '#222');
}

/** Builds the grid of test digits (once per set-up); predictions come with updateDigitGrid. */
export function buildDigitGrid(container, images, labels) {
  container.replaceChildren();
  const n = labels.length;
  for (let i = 0; i < n; i++) {
    const fig = document.createElement('figure');
    fig.className = 'digit';
    const c = document.createElement('canvas');
    c.width = 28;
    c.height = 28;
    const img = new ImageData(28, 28);
    for (let j = 0; j < 784; j++) {
      const v = 255 - images[i * 784 + j];
      img.data[4 * j] = v;
      img.data[4 * j + 1] = v;
      img.data[4 * j + 2] = v;
      img.data[4 * j + 3] = 255;
    }
    c.getContext('2d').putImageData(img, 0, 0);
    c.setAttribute('aria-hidden', 'true');
    const cap = document.createElement('figcaption');
    cap.textContent = '·';
    fig.append(c, cap);
    fig.dataset.label = String(labels[i]);
    container.append(fig);
  }
}

export function updateDigitGrid(container, predicted) {
  const figs = container.children;
  for (let i = 0; i < figs.length && i < predicted.length; i++) {
    const fig = figs[i];
    const truth = Number(fig.dataset.label);
    const p = predicted[i];
    const wrong = p !== truth;
    fig.classList.toggle('wrong', wrong);
    fig.dataset.predicted = String(p);
    const cap = fig.querySelector('figcaption');
    cap.textContent = wrong ? `${p} (${truth})` : String(p);
    fig.setAttribute('aria-label', wrong ? `digit ${truth}, predicted ${p}: wrong` : `digit ${truth}, predicted ${p}`);
  }
}

/** Fills the confusion-matrix table; cell shade by the share of its row. */
export function drawConfusion(table, confusion, classes) {
  const rows = [];
  const head = ['<tr><th scope="col"><span class="visually-hidden">true \\ predicted</span></th>'];
  for (let c = 0; c < classes; c++) head.push(`<th scope="col">${c}</th>`);
  head.push('</tr>');
  rows.push(`<thead>${head.join('')}</thead><tbody>`);
  for (let t = 0; t < classes; t++) {
    let total = 0;
    for (let p = 0; p < classes; p++) total += confusion[t * classes + p];
    const cells = [`<th scope="row">${t}</th>`];
    for (let p = 0; p < classes; p++) {
      const v = confusion[t * classes + p];
      const share = total ? v / total : 0;
      const hue = t === p ? '25, 103, 210' : '217, 48, 37';
      const alpha = t === p ? share : Math.min(1, share * 4);
      cells.push(`<td style="background: rgba(${hue}, ${alpha.toFixed(3)}); color: ${alpha > 0.55 ? '#fff' : 'inherit'}">${v}</td>`);
    }
    rows.push(`<tr>${cells.join('')}</tr>`);
  }
  rows.push('</tbody>');
  table.innerHTML = rows.join('');
}

/** Probability bars for the ten digits. */
export function drawProbs(list, probs) {
  if (list.children.length !== probs.length) {
    list.replaceChildren();
    for (let c = 0; c < probs.length; c++) {
      const li = document.createElement('li');
      li.innerHTML = `<span class="digit-label">${c}</span><span class="bar"><span class="fill"></span></span><span class="pct"></span>`;
      list.append(li);
    }
  }
  let best = 0;
  for (let c = 1; c < probs.length; c++) if (probs[c] > probs[best]) best = c;
  for (let c = 0; c < probs.length; c++) {
    const li = list.children[c];
    li.querySelector('.fill').style.width = `${(probs[c] * 100).toFixed(1)}%`;
    li.querySelector('.pct').textContent = `${(probs[c] * 100).toFixed(1)} %`;
    li.classList.toggle('best', c === best);
    li.setAttribute('aria-label', `${c}: ${(probs[c] * 100).toFixed(1)} percent`);
  }
  return best;
}
