// The playground's weights=idb:<name> (web/src/weights.js through engine.js): the tutorial's
// Step 13 stores its MNIST model with kiln.io.saveToIndexedDB; the playground builds its own
// Sequential from the link's layers (modelspec.js) and loads those bytes into it. Real
// engine, IndexedDB from fake-indexeddb.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { Engine } from '../../../web/src/engine.js';
import { describeModel } from '../../../web/src/modelspec.js';
import { decodeState } from '../../../web/src/state.js';
import { loadInitialWeights } from '../../../web/src/weights.js';

const MNIST = { features: 784, classes: 10, image: [1, 28, 28] };
// The tutorial's model (web/tutorial/content/12-learner.md, MNIST_LAYERS).
const TUTORIAL_LAYERS = [
  { type: 'linear', dInput: 784, dOutput: 128 },
  { type: 'relu' },
  { type: 'linear', dInput: 128, dOutput: 10 },
];

let kiln;
let engine;
beforeAll(async () => {
  kiln = await init({ threads: false });
  engine = new Engine(kiln);
});

/** The playground's session for a link, as worker.js builds it. */
function sessionFor(link) {
  const { state, warnings } = decodeState(link);
  expect(warnings).toEqual([]);
  const desc = describeModel(state.layers, MNIST);
  expect(desc.ok).toBe(true);
  return { state, session: engine.createSession(desc.spec, state) };
}

/** Logits of a few fixed inputs, in eval mode without a graph. */
function outputs(model) {
  return kiln.noGrad(() => kiln.tidy(() => {
    model.eval();
    const x = kiln.Tensor.arange(0, 3 * 784).float().reshape([3, 784]).mul(1 / (3 * 784));
    return Array.from(model.forward(x).dataSync());
  }));
}

describe('loading the tutorial weights into the playground model', () => {
  it("the playground's model for layers=d128-relu has the tutorial model's parameter names and shapes", () => {
    const { session } = sessionFor('#data=mnist&layers=d128-relu&weights=idb:t');
    const tutorial = kiln.nn.sequential({ layers: TUTORIAL_LAYERS }, { seed: 0 });
    const shapes = (m) => kiln.tidy(() => Object.entries(m.namedParameters()).map(([n, p]) => `${n} [${p.shape}]`));
    expect(shapes(session.model)).toEqual(['0.weight [128,784]', '0.bias [128]', '2.weight [10,128]', '2.bias [10]']);
    expect(shapes(session.model)).toEqual(shapes(tutorial));
    tutorial.dispose();
    session.dispose();
  });

  it('loads the stored bytes: the playground model then computes what the tutorial model does', async () => {
    const tutorial = kiln.nn.sequential({ layers: TUTORIAL_LAYERS }, { seed: 5 });
    await kiln.io.saveToIndexedDB('tutorial-mnist-mlp', tutorial);
    const { state, session } = sessionFor('#data=mnist&layers=d128-relu&weights=idb:tutorial-mnist-mlp');
    expect(state.weights).toBe('idb:tutorial-mnist-mlp');
    expect(outputs(session.model)).not.toEqual(outputs(tutorial)); // random weights (seed 1) first
    const notice = await loadInitialWeights(engine, session, 'tutorial-mnist-mlp');
    expect(notice).toEqual({ status: 'loaded', kind: 'info', text: "Loaded the tutorial's weights (tutorial-mnist-mlp)" });
    expect(outputs(session.model)).toEqual(outputs(tutorial));
    tutorial.dispose();
    session.dispose();
  });

  it('a name with nothing stored: a clear notice, random weights kept', async () => {
    const { session } = sessionFor('#data=mnist&layers=d128-relu&weights=idb:never-saved');
    const before = outputs(session.model);
    const notice = await loadInitialWeights(engine, session, 'never-saved');
    expect(notice.status).toBe('missing');
    expect(notice.kind).toBe('error');
    expect(notice.text).toBe(`No weights named "never-saved" are stored in this browser (run the tutorial's Step 13 in this browser first); the model starts from random weights.`);
    expect(outputs(session.model)).toEqual(before);
    session.dispose();
  });

  it('weights of other layers: a notice naming the mismatch, the model unchanged', async () => {
    const tutorial = kiln.nn.sequential({ layers: TUTORIAL_LAYERS }, { seed: 6 });
    await kiln.io.saveToIndexedDB('tutorial-mnist-mlp', tutorial);
    const { session } = sessionFor('#data=mnist&layers=d128-relu,d64-relu&weights=idb:tutorial-mnist-mlp');
    const before = outputs(session.model);
    const notice = await loadInitialWeights(engine, session, 'tutorial-mnist-mlp');
    expect(notice.status).toBe('mismatch');
    expect(notice.kind).toBe('error');
    expect(notice.text).toMatch(/^The weights "tutorial-mnist-mlp" do not fit these layers \(.*"2\.weight" has shape \[10, 128\], module expects \[64, 128\]/);
    expect(notice.text).toMatch(/the model starts from random weights\.$/);
    expect(outputs(session.model)).toEqual(before);
    tutorial.dispose();
    session.dispose();
  });

  it('an entry that is not SafeTensors: an error notice, the model unchanged', async () => {
    await kiln.io.saveToIndexedDB('garbage', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]));
    const { session } = sessionFor('#data=mnist&layers=d128-relu&weights=idb:garbage');
    const before = outputs(session.model);
    const notice = await loadInitialWeights(engine, session, 'garbage');
    expect(notice.kind).toBe('error');
    expect(['mismatch', 'error']).toContain(notice.status);
    expect(notice.text).toMatch(/"garbage"/);
    expect(outputs(session.model)).toEqual(before);
    session.dispose();
  });
});
