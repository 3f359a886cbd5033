// The playground's model description -> kiln-dl's `kiln.nn.sequential` spec (BRIEF6 contract),
// with validation (clear messages), a parameter count and a summary table. Pure JS: the
// page shows the count and the summary as the user edits, before the worker builds anything.
//
// A playground model is a list of blocks, convolution blocks first, then dense blocks:
//   { kind: 'dense', units, act, dropout }           -> linear, activation, dropout (if > 0)
//   { kind: 'conv', filters, kernel, act, pool, padding }
//                                                     -> conv2d, activation, 2x2 pool (if any)
// followed by the output layer (linear to the number of classes; the loss, cross-entropy,
// takes logits). Convolutions need image input (MNIST): the spec starts with
// reshape [1, 28, 28] and gets a flatten after the last convolution block.

/** Activations offered per layer: kiln-dl layer types; 'linear' means none. */
export const ACTIVATIONS = ['relu', 'tanh', 'sigmoid', 'gelu', 'leakyRelu', 'silu', 'linear'];
export const POOLS = ['max', 'avg', 'none'];
export const PADDINGS = ['valid', 'same'];

/** Limits of the playground's builder. */
export const LIMITS = {
  maxBlocks: 8,
  maxUnits: 1024,
  maxFilters: 64,
  kernels: [1, 3, 5, 7],
  maxDropout: 0.9,
  maxParams: 5_000_000,
};

/** The default MLPs and the CNN preset (the anchor models of bench/RESULTS.md). */
export const DEFAULT_TOY_LAYERS = [
  { kind: 'dense', units: 8, act: 'tanh', dropout: 0 },
  { kind: 'dense', units: 8, act: 'tanh', dropout: 0 },
];
export const DEFAULT_MNIST_LAYERS = [
  { kind: 'dense', units: 128, act: 'relu', dropout: 0 },
  { kind: 'dense', units: 64, act: 'relu', dropout: 0 },
];
export const CNN_PRESET = [
  { kind: 'conv', filters: 8, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' },
  { kind: 'conv', filters: 16, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' },
];

/** A fresh copy of a layer list (the constants above are shared). */
export const cloneLayers = (layers) => layers.map((l) => ({ ...l }));

const fmtShape = (s) => `[${s.join(', ')}]`;

/**
 * Describes the model for an input.
 * @param {object[]} blocks the playground layers (see the top of this file)
 * @param {{features: number, classes: number, image?: number[]}} input
 *   features per item (2 or 784); image [channels, height, width] if the data are images.
 * @returns {{ok: boolean, errors: string[], spec: {layers: object[]} | null,
 *   rows: {index: number, layer: string, output: string, params: number}[], numParams: number}}
 *   errors name the layer by its 1-based position as the page shows it ("Layer 2 (dense): ...").
 */
export function describeModel(blocks, input) {
  const errors = [];
  const rows = [];
  const layers = [];
  let numParams = 0;
  if (!Array.isArray(blocks)) {
    return { ok: false, errors: ['The model must be a list of layers'], spec: null, rows, numParams: 0 };
  }
  if (blocks.length > LIMITS.maxBlocks) {
    errors.push(`The model has ${blocks.length} hidden layers; the playground allows at most ${LIMITS.maxBlocks}`);
  }
  let shape = [input.features]; // per-item shape
  let seenDense = false;
  let shapeBroken = false; // after a shape error, later layers are not measured
  const row = (layer, params) => {
    rows.push({ index: rows.length, layer, output: fmtShape(['batch', ...shape]), params });
    numParams += params;
  };
  const intIn = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  blocks.forEach((b, i) => {
    const where = `Layer ${i + 1}${b && typeof b.kind === 'string' ? ` (${b.kind})` : ''}`;
    if (!b || (b.kind !== 'dense' && b.kind !== 'conv')) {
      errors.push(`${where}: unknown layer kind ${JSON.stringify(b?.kind)} (expected "dense" or "conv")`);
      return;
    }
    if (!ACTIVATIONS.includes(b.act)) {
      errors.push(`${where}: unknown activation ${JSON.stringify(b.act)} (expected one of ${ACTIVATIONS.join(', ')})`);
    }
    if (b.kind === 'dense') {
      seenDense = true;
      if (!intIn(b.units, 1, LIMITS.maxUnits)) {
        errors.push(`${where}: units must be an integer from 1 to ${LIMITS.maxUnits}, got ${JSON.stringify(b.units)}`);
        return;
      }
      const dropout = b.dropout ?? 0;
      if (!(typeof dropout === 'number' && dropout >= 0 && dropout <= LIMITS.maxDropout)) {
        errors.push(`${where}: dropout must be a number from 0 to ${LIMITS.maxDropout}, got ${JSON.stringify(b.dropout)}`);
        return;
      }
      if (shapeBroken) return;
      if (shape.length !== 1) {
        layers.push({ type: 'flatten' });
        shape = [shape.reduce((a, c) => a * c, 1)];
        row('flatten', 0);
      }
      const dIn = shape[0];
      layers.push({ type: 'linear', dInput: dIn, dOutput: b.units, bias: true });
      shape = [b.units];
      row(`linear ${dIn} → ${b.units}`, dIn * b.units + b.units);
      if (b.act !== 'linear' && ACTIVATIONS.includes(b.act)) {
        layers.push(b.act === 'leakyRelu' ? { type: 'leakyRelu', negativeSlope: 0.01 } : { type: b.act });
        row(b.act, 0);
      }
      if (dropout > 0) {
        layers.push({ type: 'dropout', prob: dropout });
        row(`dropout ${dropout}`, 0);
      }
      return;
    }
    // conv
    if (!input.image) {
      errors.push(`${where}: convolution layers need image input; pick MNIST or remove this layer`);
      return;
    }
    if (seenDense) {
      errors.push(`${where}: a convolution cannot follow a dense layer; put the conv layers first`);
      return;
    }
    if (!intIn(b.filters, 1, LIMITS.maxFilters)) {
      errors.push(`${where}: filters must be an integer from 1 to ${LIMITS.maxFilters}, got ${JSON.stringify(b.filters)}`);
      return;
    }
    if (!LIMITS.kernels.includes(b.kernel)) {
      errors.push(`${where}: kernel size must be one of ${LIMITS.kernels.join(', ')}, got ${JSON.stringify(b.kernel)}`);
      return;
    }
    const pool = b.pool ?? 'max';
    const padding = b.padding ?? 'valid';
    if (!POOLS.includes(pool)) {
      errors.push(`${where}: pooling must be one of ${POOLS.join(', ')}, got ${JSON.stringify(b.pool)}`);
      return;
    }
    if (!PADDINGS.includes(padding)) {
      errors.push(`${where}: padding must be one of ${PADDINGS.join(', ')}, got ${JSON.stringify(b.padding)}`);
      return;
    }
    if (shapeBroken) return;
    if (shape.length === 1) {
      layers.push({ type: 'reshape', shape: [...input.image] });
      shape = [...input.image];
      row(`reshape ${fmtShape(input.image)}`, 0);
    }
    const [cin, h, w] = shape;
    const k = b.kernel;
    const oh = padding === 'same' ? h : h - k + 1;
    const ow = padding === 'same' ? w : w - k + 1;
    if (oh < 1 || ow < 1) {
      shapeBroken = true;
      errors.push(`${where}: its ${h}×${w} input is smaller than the ${k}×${k} kernel; use a smaller kernel, padding "same" or fewer pooling layers`);
      return;
    }
    layers.push({ type: 'conv2d', channels: [cin, b.filters], kernelSize: [k, k], stride: [1, 1], padding });
    shape = [b.filters, oh, ow];
    row(`conv2d ${cin} → ${b.filters}, ${k}×${k}, ${padding}`, cin * b.filters * k * k + b.filters);
    if (b.act !== 'linear' && ACTIVATIONS.includes(b.act)) {
      layers.push(b.act === 'leakyRelu' ? { type: 'leakyRelu', negativeSlope: 0.01 } : { type: b.act });
      row(b.act, 0);
    }
    if (pool !== 'none') {
      if (oh < 2 || ow < 2) {
        shapeBroken = true;
        errors.push(`${where}: its ${oh}×${ow} output is too small for 2×2 pooling; set pooling to none`);
        return;
      }
      layers.push({ type: pool === 'max' ? 'maxPool2d' : 'avgPool2d', kernelSize: [2, 2] });
      shape = [b.filters, Math.floor(oh / 2), Math.floor(ow / 2)];
      row(`${pool === 'max' ? 'maxPool2d' : 'avgPool2d'} 2×2`, 0);
    }
  });
  if (errors.length === 0) {
    if (shape.length !== 1) {
      layers.push({ type: 'flatten' });
      shape = [shape.reduce((a, c) => a * c, 1)];
      row('flatten', 0);
    }
    const dIn = shape[0];
    layers.push({ type: 'linear', dInput: dIn, dOutput: input.classes, bias: true });
    shape = [input.classes];
    row(`linear ${dIn} → ${input.classes} (output, ${input.task === 'regression' ? 'value, MSE loss' : 'logits'})`, dIn * input.classes + input.classes);
    if (numParams > LIMITS.maxParams) {
      errors.push(`The model has ${numParams.toLocaleString('en-US')} parameters, above the playground's limit of ${LIMITS.maxParams.toLocaleString('en-US')}`);
    }
  }
  const ok = errors.length === 0;
  return { ok, errors, spec: ok ? { layers } : null, rows: ok ? rows : [], numParams: ok ? numParams : 0 };
}

/** The summary as fixed-width text (the page's table is built from `rows`). */
export function summaryText(desc) {
  if (!desc.ok) return desc.errors.join('\n');
  const lines = desc.rows.map((r) => `${String(r.index).padStart(2)}  ${r.layer.padEnd(38)} ${r.output.padEnd(18)} ${r.params.toLocaleString('en-US').padStart(10)}`);
  lines.push(`Total parameters: ${desc.numParams.toLocaleString('en-US')}`);
  return lines.join('\n');
}
