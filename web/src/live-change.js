// Which changes of the set-up the running model survives (ConvNetJS: the training settings
// change while it trains) and which start a new model (the data, the layers, the seed).
// Pure JS, unit-tested in tests/js/playground/live.test.mjs.

/** Settings that change live: the model, its step count and the optimizer's state are kept. */
export const LIVE_FIELDS = {
  lr: 'learning rate',
  batch: 'batch size',
  epochs: 'epochs',
  wd: 'weight decay',
  momentum: 'momentum',
  opt: 'optimizer',
  reg: 'regularization',
  regRate: 'regularization rate',
};

/** Short names for the charts' marks (epochs are not marked: they do not change the curve). */
const MARK_NAMES = { lr: 'lr', batch: 'batch', wd: 'wd', momentum: 'momentum', opt: '', reg: 'reg', regRate: 'reg rate' };

/**
 * Settings that are not the model's or that other paths apply to the running model: the
 * view options, the link's initial weights, and the points' own seed (Regenerate: new
 * points, same model).
 */
export const VIEW_FIELDS = new Set(['discretize', 'showTest', 'weights', 'dataSeed']);

/** Settings that define the data (a change makes a new data set, so a new model). */
const DATA_FIELDS = {
  data: 'data set',
  points: 'points',
  noise: 'noise',
  test: 'test share',
  classes: 'clusters',
  train: 'training images',
  mtest: 'test images',
  features: 'input features',
};

const OPT_NAMES = { sgd: 'SGD', adam: 'Adam', adamw: 'AdamW' };

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function show(key, v) {
  if (key === 'opt') return OPT_NAMES[v] ?? String(v);
  if (Array.isArray(v)) return v.length ? v.join(', ') : 'none';
  if (typeof v === 'number') return String(Number(v.toPrecision(6)));
  return String(v);
}

/** The layers without their dropout rates (the rest is the architecture). */
const withoutDropout = (layers) => layers.map(({ dropout, ...rest }) => rest);

/**
 * Compares the set-up a model was trained with to the page's set-up.
 * @param {object} before the set-up of the running model
 * @param {object} after the set-up now
 * @returns {{kind: 'same' | 'live' | 'reset', live: string[], reset: string[], marks: string[], optimizerChanged: boolean, dropoutChanged: boolean}}
 *   `live`: what changes live ("learning rate 0.01 → 0.03"); `reset`: why a new model is
 *   needed ("layers: d8-tanh,d8-tanh → d16-tanh,d8-tanh", "noise 0 → 0.1"); kind 'reset'
 *   whenever `reset` is not empty; `marks`: the live changes in short ("lr 0.03") for the
 *   charts.
 */
export function classifyChange(before, after) {
  const live = [];
  const reset = [];
  const marks = [];
  let dropoutChanged = false;
  // In a fixed order: the layers, the training settings, the data, the rest.
  const order = ['layers', ...Object.keys(LIVE_FIELDS), ...Object.keys(DATA_FIELDS)];
  const rank = (k) => (order.includes(k) ? order.indexOf(k) : order.length);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort((a, b) => rank(a) - rank(b));
  for (const key of keys) {
    if (VIEW_FIELDS.has(key) || same(before[key], after[key])) continue;
    if (key === 'layers') {
      const a = before.layers ?? [];
      const b = after.layers ?? [];
      if (a.length === b.length && same(withoutDropout(a), withoutDropout(b))) {
        dropoutChanged = true;
        a.forEach((l, i) => {
          if ((l.dropout ?? 0) !== (b[i].dropout ?? 0)) {
            live.push(`dropout of layer ${i + 1} ${show('dropout', l.dropout ?? 0)} → ${show('dropout', b[i].dropout ?? 0)}`);
            marks.push(`dropout${a.length > 1 ? ` ${i + 1}` : ''} ${show('dropout', b[i].dropout ?? 0)}`);
          }
        });
      } else {
        reset.push(describeLayers(a, b));
      }
    } else if (key in LIVE_FIELDS) {
      live.push(`${LIVE_FIELDS[key]} ${show(key, before[key])} → ${show(key, after[key])}`);
      if (key in MARK_NAMES) marks.push(`${MARK_NAMES[key]} ${show(key, after[key])}`.trim());
    } else if (key in DATA_FIELDS) {
      reset.push(`${DATA_FIELDS[key]} ${show(key, before[key])} → ${show(key, after[key])}`);
    } else {
      reset.push(`${key} ${show(key, before[key])} → ${show(key, after[key])}`);
    }
  }
  const kind = reset.length ? 'reset' : live.length ? 'live' : 'same';
  return { kind, live, reset, marks, optimizerChanged: !same(before.opt, after.opt), dropoutChanged };
}

/** "layers: 2 → 3" or "layer 2: 8 → 16 units" for the reset notice. */
function describeLayers(a, b) {
  if (a.length !== b.length) return `layers: ${a.length} → ${b.length} hidden layers`;
  const diffs = [];
  a.forEach((l, i) => {
    const m = b[i];
    if (same(withoutDropout([l]), withoutDropout([m]))) return;
    if (l.kind !== m.kind) diffs.push(`layer ${i + 1}: ${l.kind} → ${m.kind}`);
    else if (l.kind === 'dense' && l.units !== m.units) diffs.push(`layer ${i + 1}: ${l.units} → ${m.units} units`);
    else if (l.kind === 'conv' && l.filters !== m.filters) diffs.push(`layer ${i + 1}: ${l.filters} → ${m.filters} filters`);
    else if (l.act !== m.act) diffs.push(`layer ${i + 1}: ${l.act} → ${m.act}`);
    else diffs.push(`layer ${i + 1} changed`);
  });
  return diffs.join(', ');
}
