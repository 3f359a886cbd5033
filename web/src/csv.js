// "Your CSV": a data set of 2-D points from a file the user uploads (one point a row:
// x1, x2, label), read with papaparse. Pure (no DOM): the page (tfp.js) shows the result or
// the errors beside the upload button; the unit tests read strings.
//
// - A header row is optional: a first row whose x1 or x2 field is not a number is a header.
//   With a header, the columns named x1/x, x2/y and label/class/target (any case) are used
//   when present, else the first three.
// - The label column holds class names (numbers or words); 2 .. CSV_LIMITS.maxClasses
//   distinct ones. Classes are numbered in sorted order (numerically if all are numbers).
// - The points are centred and scaled by one factor (the aspect ratio kept) into [-1, 1]²,
//   the square of the toy sets; the result says by how much.
// - Any bad row rejects the file, with up to CSV_LIMITS.maxErrors messages naming the line.
import Papa from 'papaparse';
import { TOY_LIMITS } from './datasets.js';

/** Limits of an uploaded file. */
export const CSV_LIMITS = {
  maxBytes: 2 * 1024 * 1024,
  minPoints: 10,
  maxPoints: TOY_LIMITS.maxPoints,
  maxClasses: TOY_LIMITS.maxClasses,
  maxErrors: 8,
};

const isNum = (s) => s !== '' && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s);

/**
 * Reads the text of a CSV file of 2-D points.
 * @param {string} text the file's contents
 * @param {string} [name] the file's name (for messages)
 * @returns {{ok: true, x: Float32Array, y: Int32Array, n: number, numClasses: number,
 *   classNames: string[], header: boolean, scale: number, center: number[], columns: string[]}
 *   | {ok: false, errors: string[]}}
 *   x row-major [n, 2] in [-1, 1]² (original = x / scale + center); y class indices.
 */
export function parseCsv(text, name = 'the file') {
  const bad = (...errors) => ({ ok: false, errors });
  if (typeof text !== 'string') return bad(`${name}: not text`);
  if (text.length > CSV_LIMITS.maxBytes) {
    return bad(`${name} is ${(text.length / 1048576).toFixed(1)} MB; at most ${CSV_LIMITS.maxBytes / 1048576} MB (${CSV_LIMITS.maxPoints} points)`);
  }
  if (text.includes('\u0000')) return bad(`${name} is not a text file (it holds NUL bytes)`);
  const parsed = Papa.parse(text.replace(/^\uFEFF/, ''), { skipEmptyLines: false, delimiter: '' });
  const rows = parsed.data;
  const errors = [];
  for (const e of parsed.errors) {
    // Papa's "UndetectableDelimiter" is harmless for one-column garbage: the rows say more.
    if (e.code === 'UndetectableDelimiter') continue;
    errors.push(`line ${(e.row ?? 0) + 1}: ${e.message}`);
  }
  // Row i of papaparse is line i + 1 (quoted fields with line breaks are not expected here).
  const lines = rows.map((r, i) => ({ line: i + 1, cells: r.map((c) => String(c).trim()) })).filter((r) => r.cells.some((c) => c !== ''));
  if (lines.length === 0) return bad(`${name} is empty: expected rows of x1, x2, label`);
  let cols = [0, 1, 2];
  let header = false;
  let columns = ['x1', 'x2', 'label'];
  const first = lines[0].cells;
  if (!(isNum(first[0] ?? '') && isNum(first[1] ?? ''))) {
    header = true;
    const names = first.map((c) => c.toLowerCase());
    const find = (...want) => names.findIndex((n) => want.includes(n));
    const ix = find('x1', 'x');
    const iy = find('x2', 'y');
    const il = find('label', 'class', 'target', 'y_true', 'category');
    if (ix >= 0 && iy >= 0 && il >= 0 && new Set([ix, iy, il]).size === 3) cols = [ix, iy, il];
    if (first.length < 3) return bad(`line ${lines[0].line}: the header has ${first.length} column${first.length === 1 ? '' : 's'}; expected x1, x2, label`);
    columns = cols.map((c) => first[c]);
    lines.shift();
  }
  if (lines.length > CSV_LIMITS.maxPoints) return bad(`${name} has ${lines.length} points; at most ${CSV_LIMITS.maxPoints}`);
  const pts = [];
  for (const { line, cells } of lines) {
    if (errors.length >= CSV_LIMITS.maxErrors) break;
    const need = Math.max(...cols) + 1;
    if (cells.length < need) {
      errors.push(`line ${line}: ${cells.length} field${cells.length === 1 ? '' : 's'} (${JSON.stringify(cells.join(',').slice(0, 40))}); expected ${need}: ${columns.join(', ')}`);
      continue;
    }
    const [a, b, l] = cols.map((c) => cells[c]);
    const why = [];
    if (!isNum(a)) why.push(`${columns[0]} ${JSON.stringify(a.slice(0, 20))} is not a number`);
    if (!isNum(b)) why.push(`${columns[1]} ${JSON.stringify(b.slice(0, 20))} is not a number`);
    if (l === '') why.push(`the ${columns[2]} is empty`);
    if (why.length) {
      errors.push(`line ${line}: ${why.join('; ')}`);
      continue;
    }
    const x1 = Number(a);
    const x2 = Number(b);
    if (!Number.isFinite(x1) || !Number.isFinite(x2)) {
      errors.push(`line ${line}: ${!Number.isFinite(x1) ? a : b} is too large`);
      continue;
    }
    pts.push([x1, x2, l]);
  }
  if (errors.length) {
    if (errors.length >= CSV_LIMITS.maxErrors) errors.push(`(stopped after ${CSV_LIMITS.maxErrors} errors)`);
    return bad(...errors);
  }
  if (pts.length < CSV_LIMITS.minPoints) return bad(`${name} has ${pts.length} point${pts.length === 1 ? '' : 's'}; at least ${CSV_LIMITS.minPoints} (some for training, some for testing)`);
  const labels = [...new Set(pts.map((p) => p[2]))];
  if (labels.length < 2) return bad(`${name}: every point has the label ${JSON.stringify(labels[0])}; at least 2 classes`);
  if (labels.length > CSV_LIMITS.maxClasses) {
    return bad(`${name}: the ${columns[2]} column has ${labels.length} different values (${labels.slice(0, 6).join(', ')}${labels.length > 6 ? ', …' : ''}); at most ${CSV_LIMITS.maxClasses} classes`);
  }
  const numeric = labels.every(isNum);
  labels.sort(numeric ? (p, q) => Number(p) - Number(q) : undefined);
  const index = new Map(labels.map((l, i) => [l, i]));
  let lo = [Infinity, Infinity];
  let hi = [-Infinity, -Infinity];
  for (const [a, b] of pts) {
    lo = [Math.min(lo[0], a), Math.min(lo[1], b)];
    hi = [Math.max(hi[0], a), Math.max(hi[1], b)];
  }
  const center = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2];
  const half = Math.max(hi[0] - lo[0], hi[1] - lo[1]) / 2;
  if (!(half > 0)) return bad(`${name}: all points are at the same place (${pts[0][0]}, ${pts[0][1]})`);
  const scale = 1 / half;
  const n = pts.length;
  const x = new Float32Array(n * 2);
  const y = new Int32Array(n);
  pts.forEach(([a, b, l], i) => {
    x[2 * i] = (a - center[0]) * scale;
    x[2 * i + 1] = (b - center[1]) * scale;
    y[i] = index.get(l);
  });
  return { ok: true, x, y, n, numClasses: labels.length, classNames: labels, header, scale, center, columns };
}
