// The core engine (kiln-core.wasm, init({engine: 'core'}): DESIGN.md "Engines", README
// "Core and full engine") against the full one (kiln.wasm): the same MLP training gives
// bit-identical losses and weights for the same seed (one C++ engine, linked twice); what
// only the full engine has throws KilnError `State` naming it; instances are independent;
// init()'s engine option. The rest of the suite runs on the full engine
// (tests/js/support/kiln_full.mjs); this file asks for each engine by name.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, KilnError } from 'kiln-dl';
import { init as packageInit } from '../../dist/node.js';
import { chooseEngineBuild } from '../../dist/select.js';
import { CORE_FUNCTIONS, CORE_LAYER_TYPES, FULL_FUNCTIONS, FULL_LAYER_TYPES } from '../../dist/generated/engines.js';

let core;
let full;
beforeAll(async () => {
  core = await init({ engine: 'core' });
  full = await init({ engine: 'full' });
});

const HINT = "load the full engine with `await init({ engine: 'full' })`";

function expectKilnError(fn, code, text) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(KilnError);
  expect(error.code).toBe(code);
  expect(error.message).toBe(text);
}

function notInCore(name) {
  return `${name} is not in the core engine that init() loaded; ${HINT}`;
}

/** 64 points of two interleaved half-moons (mulberry32 noise), int32 labels. */
function moons(seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const x = new Float32Array(64 * 2);
  const y = new Int32Array(64);
  for (let i = 0; i < 64; i++) {
    const c = i % 2;
    const angle = Math.PI * rand();
    x[2 * i] = Math.cos(angle) + c - 0.5 + 0.1 * rand();
    x[2 * i + 1] = (c ? -1 : 1) * Math.sin(angle) + 0.1 * rand();
    y[i] = c;
  }
  return { x, y };
}

const MLP = {
  layers: [
    { type: 'linear', dInput: 2, dOutput: 16 }, { type: 'relu' }, { type: 'dropout', prob: 0.1 },
    { type: 'linear', dInput: 16, dOutput: 16 }, { type: 'tanh' },
    { type: 'linear', dInput: 16, dOutput: 2 },
  ],
};

/** fit() of the MLP for 3 epochs with Adam: the history's losses and the trained weights' bytes. */
async function trainMlp(kiln) {
  const { x, y } = moons(5);
  const model = kiln.nn.sequential(MLP, { seed: 42 });
  const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 0.02 }), seed: 7 });
  const data = kiln.data.fromArrays(x, y, { itemShape: [2] });
  const history = await learner.fit(data, { epochs: 3, batchSize: 8 });
  const stepLoss = learner.trainBatch(x.subarray(0, 32), y.subarray(0, 16)).loss;
  const weights = model.saveSafetensors();
  learner.dispose();
  data.dispose();
  model.dispose();
  return { loss: history.loss, stepLoss, weights };
}

describe('the core engine', () => {
  it('is what init() loads by default (the package entry), and backendInfo() names it', async () => {
    expect(core.backendInfo()).toMatchObject({ engine: 'core', build: 'simd', threads: 1, maxThreads: 1 });
    expect(full.backendInfo().engine).toBe('full');
    const byDefault = await packageInit();
    expect(byDefault.backendInfo().engine).toBe('core');
  });

  it('trains an MLP with the Learner to the same losses and weights as the full engine, bit for bit', async () => {
    const a = await trainMlp(core);
    const b = await trainMlp(full);
    expect(a.loss).toHaveLength(3);
    expect(a.loss[2]).toBeLessThan(a.loss[0]); // it learns
    expect(a.loss).toEqual(b.loss); // toEqual on numbers is Object.is: exact
    expect(a.stepLoss).toBe(b.stepLoss);
    expect(Buffer.from(a.weights).equals(Buffer.from(b.weights))).toBe(true);
  });

  it('has every Tensor op of the full engine (the op table and the tensor entry points)', () => {
    const ops = (k) => JSON.stringify(k._internals.raw.opTable());
    expect(ops(core)).toBe(ops(full));
    for (const name of FULL_FUNCTIONS.filter((f) => /^t[A-Z]/.test(f))) expect(CORE_FUNCTIONS).toContain(name);
    core.tidy(() => {
      const t = core.Tensor.fromData(Float32Array.from([1, -2, 3, -4]), { shape: [2, 2] });
      expect(Array.from(t.matmul(t).relu().sum(1).dataSync())).toEqual([6, 10]); // relu([[-5, 6], [-9, 10]])
    });
  });

  it('registers the dense layers, in the full engine\'s order, and nothing else', () => {
    expect(CORE_LAYER_TYPES).toEqual(['linear', 'dropout', 'relu', 'gelu', 'sigmoid', 'tanh', 'leaky_relu', 'silu',
      'reshape', 'flatten', 'selu', 'mish', 'hard_sigmoid', 'hard_swish', 'elu', 'celu']);
    expect(FULL_LAYER_TYPES.filter((t) => CORE_LAYER_TYPES.includes(t))).toEqual(CORE_LAYER_TYPES);
    expect(core.nn.layerTypes).toEqual(['linear', 'dropout', 'relu', 'gelu', 'sigmoid', 'tanh', 'leakyRelu', 'silu',
      'reshape', 'flatten', 'selu', 'mish', 'hardSigmoid', 'hardSwish', 'elu', 'celu']);
    expect(full.nn.layerTypes).toContain('conv2d');
  });

  it('a layer type of the full engine: State naming it, from a spec and from its kiln.nn factory', () => {
    expectKilnError(() => core.nn.conv2d({ channels: [1, 2], kernelSize: [3, 3] }), 'State', notInCore('nn.conv2d'));
    expectKilnError(() => core.nn.lstm({ dInput: 2, dHidden: 3 }), 'State', notInCore('nn.lstm'));
    expectKilnError(() => core.nn.sequential([{ type: 'linear', dInput: 4, dOutput: 4 }, { type: 'maxPool2d', kernelSize: [2, 2] }]),
      'State', notInCore('SequentialConfig: layers[1]: layer type maxPool2d'));
    expectKilnError(() => core.nn.sequential({ layers: [{ type: 'batchNorm', numFeatures: 3 }] }),
      'State', notInCore('SequentialConfig: layers[0]: layer type batchNorm'));
    // A type no engine has keeps the engine's own error.
    let error;
    try {
      core.nn.sequential([{ type: 'conv9d' }]);
    } catch (e) {
      error = e;
    }
    expect(error.code).toBe('Config');
    expect(error.message).toContain('conv9d');
    // The same specs build in the full engine.
    full.nn.sequential([{ type: 'linear', dInput: 4, dOutput: 4 }, { type: 'maxPool2d', kernelSize: [2, 2] }]).dispose();
  });

  it('a function of the full engine: State naming the public function', async () => {
    core.tidy(() => {
      const x = core.Tensor.zeros([1, 1, 4, 4]);
      const w = core.Tensor.zeros([1, 1, 3, 3]);
      expectKilnError(() => core.nn.functional.conv2d(x, w), 'State', notInCore('nn.functional.conv2d'));
      expectKilnError(() => core.nn.functional.maxPool2d(x, { kernelSize: 2 }), 'State', notInCore('nn.functional.maxPool2d'));
      expectKilnError(() => core.nn.functional.interpolate(x, { size: [8, 8] }), 'State', notInCore('nn.functional.interpolate'));
      expectKilnError(() => core.io.readNamedMpk(new Uint8Array(8)), 'State', notInCore('io.readNamedMpk'));
      expectKilnError(() => core.io.loadPytorch(new Uint8Array(8)), 'State', notInCore('io.loadPytorch'));
    });
    // In the full engine the same calls reach the engine (its own errors for these inputs).
    let error;
    try {
      full.io.readNamedMpk(new Uint8Array(8));
    } catch (e) {
      error = e;
    }
    expect(error.code).not.toBe('State');
  });

  it('every full-engine entry point it lacks is a stub throwing State (none is undefined)', () => {
    const raw = core._internals.raw;
    const missing = FULL_FUNCTIONS.filter((f) => !CORE_FUNCTIONS.includes(f));
    expect(missing).toContain('fConv');
    expect(missing).toContain('pytorchDecode');
    for (const name of missing) {
      expectKilnError(() => raw[name](), 'State', notInCore(`the engine function ${name}`));
    }
  });

  it('instances are independent: tensors do not cross, seeds and memory are per instance', async () => {
    const other = await init({ engine: 'core' });
    const a = core.Tensor.ones([2]);
    const b = full.Tensor.ones([2]);
    let error;
    try {
      a.add(b);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KilnError);
    expect(error.code).toBe('Type');
    // Each instance has its own generator: a draw in `other` does not move core's.
    core.seed(3);
    other.seed(3);
    other.Tensor.random([4]).dispose();
    const r1 = core.Tensor.random([4]);
    other.seed(3);
    const r2 = other.Tensor.random([4]);
    expect(Array.from(r1.dataSync())).toEqual(Array.from(r2.dataSync()));
    // and its own memory.
    const before = other.memory().tensors;
    const c = core.Tensor.ones([3]);
    expect(other.memory().tensors).toBe(before);
    for (const t of [r1, r2, c]) t.dispose();
    for (const t of [a, b]) t.dispose();
  });

  it("init's engine option: Type for another value; Config for core with threads: true", async () => {
    const rejects = async (opts, code, text) => {
      let error;
      try {
        await packageInit(opts);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(KilnError);
      expect(error.code).toBe(code);
      expect(error.message).toBe(text);
    };
    await rejects({ engine: 'small' }, 'Type', 'init: engine must be \'core\' or \'full\', got "small"');
    await rejects({ engine: 'core', threads: true }, 'Config',
      "init: threads: true, but the core engine has no threaded build; load the full engine with `await init({ engine: 'full', threads: true })`");
    // threads: 'auto' with the core engine loads the single-threaded core.
    expect((await packageInit({ engine: 'core', threads: 'auto', numThreads: 4 })).backendInfo())
      .toMatchObject({ engine: 'core', build: 'simd', maxThreads: 1 });
  });

  it('kiln-core.wasm is smaller than kiln.wasm (gzip -9)', () => {
    const gz = (f) => gzipSync(readFileSync(new URL(`../../dist/${f}`, import.meta.url)), { level: 9 }).length;
    expect(gz('kiln-core.wasm')).toBeLessThan(0.8 * gz('kiln.wasm'));
  });
});

describe('chooseEngineBuild (which engine and build init() loads)', () => {
  const isolatedPage = { crossOriginIsolated: true, sharedMemory: true, workers: true, hardwareConcurrency: 8, node: false };
  const plainPage = { ...isolatedPage, crossOriginIsolated: false };

  it("the core engine by default, single-threaded even where threads could run ('auto')", () => {
    expect(chooseEngineBuild({}, isolatedPage)).toEqual({ engine: 'core', build: 'simd', threads: 1 });
    expect(chooseEngineBuild({ numThreads: 4 }, isolatedPage)).toEqual({ engine: 'core', build: 'simd', threads: 1 });
    expect(chooseEngineBuild({ threads: false }, plainPage)).toEqual({ engine: 'core', build: 'simd', threads: 1 });
  });

  it("the full engine chooses its build as before (chooseBuild)", () => {
    expect(chooseEngineBuild({ engine: 'full' }, isolatedPage)).toEqual({ engine: 'full', build: 'simd-threads', threads: 4 });
    expect(chooseEngineBuild({ engine: 'full', numThreads: 2 }, isolatedPage)).toEqual({ engine: 'full', build: 'simd-threads', threads: 2 });
    expect(chooseEngineBuild({ engine: 'full' }, plainPage)).toEqual({ engine: 'full', build: 'simd', threads: 1 });
  });

  it('errors: engine type, core with threads: true, and the thread options as before', () => {
    expectKilnError(() => chooseEngineBuild({ engine: 1 }, plainPage), 'Type', "init: engine must be 'core' or 'full', got number 1");
    expectKilnError(() => chooseEngineBuild({ engine: 'core', threads: true }, isolatedPage), 'Config',
      "init: threads: true, but the core engine has no threaded build; load the full engine with `await init({ engine: 'full', threads: true })`");
    expectKilnError(() => chooseEngineBuild({ threads: 'yes' }, plainPage), 'Type', 'init: threads must be true, false or \'auto\', got "yes"');
    expectKilnError(() => chooseEngineBuild({ threads: false, numThreads: 2 }, plainPage), 'Config',
      'init: numThreads 2 with threads: false (the single-threaded build has 1 thread)');
  });
});
