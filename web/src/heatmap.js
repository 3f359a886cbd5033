// Colours of the toy heat map and its points, as TensorFlow Playground's (src/heatmap.ts,
// src/playground.ts): classification mixes the class colours by probability, faded to
// white where the model is unsure; regression maps the output in [-1, 1] through orange
// (-1), light grey (0) and blue (+1). "Discretize output" paints each cell in the colour
// of its decision only (the most probable class, or the sign of the output).

/** Class colours (class 0 orange, class 1 blue, as TensorFlow Playground; then more). */
export const CLASS_COLORS = [
  [245, 147, 34],
  [8, 119, 189],
  [46, 160, 67],
  [196, 53, 158],
  [120, 94, 240],
];

/** TF Playground's regression scale: -1 -> #f59322, 0 -> #e8eaeb, +1 -> #0877bd (clamped). */
const NEG = [245, 147, 34];
const MID = [232, 234, 235];
const POS = [8, 119, 189];

/**
 * The colour of a regression value (clamped to [-1, 1]).
 * @param {number} v
 * @returns {number[]} [r, g, b]
 */
export function valueColor(v) {
  const t = Math.max(-1, Math.min(1, Number.isFinite(v) ? v : 0));
  const [a, b, f] = t < 0 ? [MID, NEG, -t] : [MID, POS, t];
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

/**
 * The colour of heat-map cell i into out[0..2].
 * @param {Float32Array} out [cells, classes] probabilities, or [cells, 1] regression outputs
 * @param {number} i the cell
 * @param {{classes: number, task?: string, discretize?: boolean}} grid
 * @param {number[]} rgb receives [r, g, b]
 */
export function cellColor(out, i, grid, rgb) {
  const { classes, task = 'classification', discretize = false } = grid;
  if (task === 'regression') {
    const v = out[i];
    const c = valueColor(discretize ? (v >= 0 ? 1 : -1) : v);
    rgb[0] = c[0];
    rgb[1] = c[1];
    rgb[2] = c[2];
    return;
  }
  let r = 0;
  let g = 0;
  let b = 0;
  let pmax = 0;
  let best = 0;
  for (let c = 0; c < classes; c++) {
    const p = out[i * classes + c];
    const col = CLASS_COLORS[c % CLASS_COLORS.length];
    r += p * col[0];
    g += p * col[1];
    b += p * col[2];
    if (p > pmax) {
      pmax = p;
      best = c;
    }
  }
  if (discretize) {
    // The decided class's colour at the strength of a sure cell.
    const col = CLASS_COLORS[best % CLASS_COLORS.length];
    rgb[0] = 255 + (col[0] - 255) * 0.6;
    rgb[1] = 255 + (col[1] - 255) * 0.6;
    rgb[2] = 255 + (col[2] - 255) * 0.6;
    return;
  }
  // Confidence 1/classes -> white, 1 -> the colour at 60 % strength.
  const t = Math.max(0, (pmax - 1 / classes) / (1 - 1 / classes)) * 0.6;
  rgb[0] = 255 + (r - 255) * t;
  rgb[1] = 255 + (g - 255) * t;
  rgb[2] = 255 + (b - 255) * t;
}

/** The CSS colour of a point: its class's, or its target's on the regression scale. */
export function pointColor(label, task = 'classification') {
  const c = task === 'regression' ? valueColor(label) : CLASS_COLORS[label % CLASS_COLORS.length];
  return `rgb(${Math.round(c[0])},${Math.round(c[1])},${Math.round(c[2])})`;
}
