// Drawing helpers of the "Look inside" views: TensorFlow Playground's diverging colours
// (negative orange, zero grey, positive blue), a "hot" map for saliency, and small
// heat-map canvases painted from numbers the engine computed.

const NEG = [245, 147, 34]; // #f59322
const MID = [232, 234, 235]; // #e8eaeb
const POS = [8, 119, 189]; // #0877bd

/** [r, g, b] for t in [-1, 1]: orange (-1) - grey (0) - blue (1), as TF Playground. */
export function diverging(t) {
  const c = Math.max(-1, Math.min(1, Number.isFinite(t) ? t : 0));
  const to = c < 0 ? NEG : POS;
  const a = Math.abs(c);
  return [MID[0] + (to[0] - MID[0]) * a, MID[1] + (to[1] - MID[1]) * a, MID[2] + (to[2] - MID[2]) * a];
}

/** CSS colour of diverging(t). */
export const divergingCss = (t) => {
  const [r, g, b] = diverging(t);
  return `rgb(${Math.round(r)},${Math.round(g)},${Math.round(b)})`;
};

/** [r, g, b] for t in [0, 1]: black - red - yellow - white. */
export function hot(t) {
  const c = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0));
  return [Math.min(1, c * 3) * 255, Math.max(0, Math.min(1, c * 3 - 1)) * 255, Math.max(0, Math.min(1, c * 3 - 2)) * 255];
}

/** Largest |v| of values[start, start + n) (at least tiny, so that a scale never divides by 0). */
export function maxAbs(values, start = 0, n = values.length - start) {
  let m = 0;
  for (let i = start; i < start + n; i++) {
    const a = Math.abs(values[i]);
    if (a > m) m = a;
  }
  return m > 0 ? m : 1e-12;
}

/** [min, max] of values[start, start + n). */
export function range(values, start = 0, n = values.length - start) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = start; i < start + n; i++) {
    if (values[i] < lo) lo = values[i];
    if (values[i] > hi) hi = values[i];
  }
  return [lo, hi];
}

/**
 * Paints w x h numbers (row-major, from values[start]) onto a canvas scaled to fill it.
 * @param {HTMLCanvasElement} canvas
 * @param {ArrayLike<number>} values
 * @param {{w: number, h: number, start?: number, color: (v: number) => number[], smooth?: boolean}} o
 */
export function paintMap(canvas, values, { w, h, start = 0, color, smooth = false }) {
  const img = new ImageData(w, h);
  for (let i = 0; i < w * h; i++) {
    const [r, g, b] = color(values[start + i]);
    img.data[4 * i] = r;
    img.data[4 * i + 1] = g;
    img.data[4 * i + 2] = b;
    img.data[4 * i + 3] = 255;
  }
  const ctx = canvas.getContext('2d');
  if (canvas.width === w && canvas.height === h) {
    ctx.putImageData(img, 0, 0);
    return;
  }
  const off = new OffscreenCanvas(w, h);
  off.getContext('2d').putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = smooth;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(off, 0, 0, canvas.width, canvas.height);
}

/** A canvas element of a size, with a role and label (text alternative). */
export function mapCanvas(width, height, label, cls = '') {
  const c = document.createElement('canvas');
  c.width = width;
  c.height = height;
  c.setAttribute('role', 'img');
  if (label) c.setAttribute('aria-label', label);
  if (cls) c.className = cls;
  return c;
}

/** A number for the page: 4 significant digits, "−" for minus. */
export function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  const s = a !== 0 && (a < 1e-3 || a >= 1e4) ? v.toExponential(2) : v.toPrecision(3);
  return s.replace(/^-/, '−');
}

/** An element with a class and text. */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
