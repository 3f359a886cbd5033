// kiln-dl/inference (bindings/js/inference.ts, inference_node.ts, inference_module.ts): the
// entry that runs models on the core engine and loads none of the training, data or io
// modules. The module graph is checked on the built files (dist/, parsed with acorn); the
// running entry needs the core engine (dist/kiln-core.{mjs,wasm}, the `core` profile of
// scripts/build.sh) and is skipped, saying so, where it is not built.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { describe, expect, it } from 'vitest';
import { expectClose, expectKilnError, expectKilnRejection } from './helpers.mjs';

const DIST = resolve(fileURLToPath(new URL('../../dist/', import.meta.url)));
const hasCore = existsSync(join(DIST, 'kiln-core.mjs')) && existsSync(join(DIST, 'kiln-core.wasm'));

/**
 * dist-relative paths of every module `entry` imports statically (itself included), and of
 * the modules a bundled file holds (the `sources` of its source map: the browser entries are
 * bundles, scripts/minify_js.mjs).
 */
function staticGraph(entry) {
  const seen = new Set();
  const visit = (file) => {
    const rel = relative(DIST, file);
    if (seen.has(rel)) return;
    seen.add(rel);
    if (!file.endsWith('.js')) return; // Emscripten's .mjs glue imports nothing
    if (existsSync(`${file}.map`)) {
      const { sources } = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
      for (const src of sources) if (!src.endsWith('.unminified.js')) seen.add(relative(DIST, resolve(dirname(file), src)));
    }
    const ast = parse(readFileSync(file, 'utf8'), { ecmaVersion: 'latest', sourceType: 'module' });
    for (const node of ast.body) {
      if (!['ImportDeclaration', 'ExportAllDeclaration', 'ExportNamedDeclaration'].includes(node.type) || !node.source) continue;
      const spec = node.source.value;
      if (spec.startsWith('node:')) continue; // inference_node.js reads the wasm with node:fs
      if (!spec.startsWith('.')) throw new Error(`${rel} imports the package ${spec} statically`);
      visit(resolve(dirname(file), spec));
    }
  };
  visit(join(DIST, entry));
  return [...seen].sort();
}

// The page's MLP: 8 -> 16 -> relu -> 3, weights w[k] = ((k % 7) - 3) / 8 in each tensor, biases 0.1.
const LAYERS = [{ type: 'linear', dInput: 8, dOutput: 16 }, { type: 'relu' }, { type: 'linear', dInput: 16, dOutput: 3 }];
const SHAPES = [['0.weight', [16, 8]], ['0.bias', [16]], ['2.weight', [3, 16]], ['2.bias', [3]]];
const value = (name, k) => (name.endsWith('bias') ? 0.1 : ((k % 7) - 3) / 8);

/** SafeTensors bytes of SHAPES, written by hand (u64 LE header length, padded JSON, f32 LE). */
function safetensors() {
  const header = {};
  const values = [];
  for (const [name, shape] of SHAPES) {
    const count = shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [values.length * 4, (values.length + count) * 4] };
    for (let k = 0; k < count; k++) values.push(value(name, k));
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const json = new TextEncoder().encode(text);
  const bytes = new Uint8Array(8 + json.length + values.length * 4);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  new Float32Array(bytes.buffer, 8 + json.length, values.length).set(values);
  return bytes;
}

/** The same MLP in plain JS (double precision). */
function forwardByHand(x) {
  const h = Array.from({ length: 16 }, (_, i) => Math.max(0, 0.1 + x.reduce((s, v, j) => s + value('w', i * 8 + j) * v, 0)));
  return Array.from({ length: 3 }, (_, o) => 0.1 + h.reduce((s, v, j) => s + value('w', o * 16 + j) * v, 0));
}

const INPUT = [[1, 0, 0, 0, 0, 0, 0, 0], [0.5, -0.5, 0.25, 0, 1, 0, -1, 0]];

describe('kiln-dl/inference: the module graph', () => {
  for (const entry of ['inference.js', 'inference_node.js']) {
    it(`${entry} loads the inference engine and no training, data or io module`, () => {
      const graph = staticGraph(entry);
      expect(graph).toContain('kiln-core-inference.mjs');
      expect(graph).not.toContain('kiln-core.mjs');
      for (const needed of ['tensor/install.js', 'nn.js', 'module_class.js', 'errors.js']) expect(graph).toContain(needed);
      // kiln.nn.functional's losses (train/loss.js, with train/common.js's option checks) are
      // layers' functions; the Learner, optimizers, metrics, datasets and io are not.
      const unwanted = graph.filter((f) => /^(train\/(?!loss\.js$|common\.js$)|data\/|io|module\.js$|train\.js$|kiln\.mjs$|kiln-mt)/.test(f));
      expect(unwanted).toEqual([]);
    });
  }

  it('package.json exports it with types, a Node condition and a default', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(pkg.exports['./inference']).toEqual({
      types: './dist/inference.d.ts', node: './dist/inference_node.js', default: './dist/inference.js',
    });
    for (const f of Object.values(pkg.exports['./inference'])) expect(existsSync(join(DIST, '..', f))).toBe(true);
  });
});

describe.skipIf(!hasCore)(`kiln-dl/inference on the core engine${hasCore ? '' : ' (skipped: dist/kiln-core.* not built)'}`, () => {
  it('runs a Sequential whose weights come from SafeTensors bytes, as plain JS computes it', async () => {
    const { init } = await import('kiln-dl/inference');
    const kiln = await init();
    expect(kiln.backendInfo()).toMatchObject({ engine: 'core', maxThreads: 1, threads: 1 });
    const model = kiln.nn.sequential({ layers: LAYERS });
    model.loadSafetensors(safetensors());
    model.eval();
    const out = kiln.tidy(() => model.forward(kiln.Tensor.fromData(INPUT)).toArray());
    out.forEach((row, i) => expectClose(row, forwardByHand(INPUT[i]), { abs: 1e-6, rel: 1e-6 }));
    model.dispose();
    expect(kiln.memory().tensors).toBe(0);
  });

  it('gives bit-identical outputs to kiln-dl\'s full engine for the same weights', async () => {
    const [{ init }, full] = await Promise.all([import('kiln-dl/inference'), import('kiln-dl')]);
    const outputs = [];
    for (const kiln of [await init(), await full.init({ engine: 'full' })]) {
      const model = kiln.nn.sequential({ layers: LAYERS });
      model.loadSafetensors(safetensors());
      outputs.push(kiln.tidy(() => model.forward(kiln.Tensor.fromData(INPUT)).toArray()));
      model.dispose();
    }
    expect(outputs[0]).toEqual(outputs[1]);
  });

  it('has no training, data or io API', async () => {
    const { init } = await import('kiln-dl/inference');
    const kiln = await init();
    // Absent, and each access says where it is (KilnError State naming kiln-dl, not a TypeError
    // on undefined); not enumerable, so listing or spreading kiln reads none of them.
    const keys = Object.keys(kiln);
    for (const name of ['Learner', 'optim', 'loss', 'data', 'io', 'metrics', 'Gradients']) {
      expect(keys).not.toContain(name);
      expectKilnError(kiln, () => kiln[name], 'State',
        new RegExp(`^kiln\\.${name}: not part of kiln-dl/inference, which runs trained models; .*import \\{ init \\} from 'kiln-dl'$`));
    }
    expectKilnError(kiln, () => new kiln.Learner({}), 'State', /^kiln\.Learner: not part of kiln-dl\/inference/);
    expectKilnError(kiln, () => kiln.optim.adam(), 'State', /^kiln\.optim: not part of kiln-dl\/inference/);
    expect({ ...kiln }.Tensor).toBe(kiln.Tensor);
    for (const name of ['Tensor', 'nn', 'Module', 'Param', 'tidy', 'dispose', 'memory', 'seed']) expect(kiln[name]).toBeDefined();
    expectKilnError(kiln, () => kiln.setNumThreads(2), 'Config', /^setNumThreads: this build \(.*\) runs 1 to 1 threads, got 2$/);
  });

  it('runs on its own engine: the core engine without the Learner, optimizers and datasets', async () => {
    const [{ init }, main] = await Promise.all([import('kiln-dl/inference'), import('kiln-dl')]);
    const kiln = await init();
    const core = await main.init();
    const raw = kiln._internals.raw;
    // Entry points of bindings/train_learner.cpp, train_optim.cpp, train_data.cpp, data_io.cpp
    // (CMakeLists.txt KILN_TRAIN_BINDINGS): in the core engine only. In the inference engine each
    // is the package's stub (engine_profile.ts installInferenceGaps), which throws State at once
    // (an Embind function called with no arguments would throw its own arity error instead).
    for (const name of ['learnerCreate', 'stepperCreate', 'optimizerCreate', 'optimizerStepParams', 'plateauCreate',
      'datasetFromArrays', 'dataPermutation', 'ioReadSafetensors']) {
      expectKilnError(kiln, () => raw[name](), 'State', new RegExp(`^the engine function ${name} is not in kiln-dl/inference's engine`));
      expect(typeof core._internals.raw[name], name).toBe('function');
    }
    // kiln.nn.functional's losses stay (bindings/train_loss.cpp): 2 rows, 3 classes, by hand.
    const lse = Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3));
    const want = ((lse - 3) + Math.log(3)) / 2;
    const [ce, mse] = kiln.tidy(() => {
      const logits = kiln.Tensor.fromData([[1, 2, 3], [0, 0, 0]]);
      const targets = kiln.Tensor.fromData([2, 0], { dtype: 'int32' });
      return [kiln.nn.functional.crossEntropy(logits, targets).item(), kiln.nn.functional.mse(logits, kiln.Tensor.zeros([2, 3])).item()];
    });
    expect(ce).toBeCloseTo(want, 6);
    expect(mse).toBeCloseTo(14 / 6, 6);
    expect(kiln.memory().tensors).toBe(0);
  });

  it('names kiln-dl, not its own init, for what only the full engine has', async () => {
    const { init } = await import('kiln-dl/inference');
    const kiln = await init();
    const hint = "is not in kiln-dl/inference's engine, which runs dense models; the full engine is kiln-dl's: `import { init } from 'kiln-dl'; await init({ engine: 'full' })`";
    expectKilnError(kiln, () => kiln.nn.conv2d({ channels: [1, 2], kernelSize: [3, 3] }), 'State', `nn.conv2d ${hint}`);
    expectKilnError(kiln, () => kiln.nn.sequential({ layers: [{ type: 'conv2d', channels: [1, 2], kernelSize: [3, 3] }] }),
      'State', `SequentialConfig: layers[0]: layer type conv2d ${hint}`);
    kiln.tidy(() => {
      expectKilnError(kiln, () => kiln.nn.functional.maxPool2d(kiln.Tensor.zeros([1, 1, 4, 4]), { kernelSize: 2 }), 'State',
        `nn.functional.maxPool2d ${hint}`);
    });
    expect(kiln.memory().tensors).toBe(0);
  });

  it('runs the README round trip without fetching the deferred module', async () => {
    // What a page running a trained model does (split for it: scripts/split_profile.mjs, the
    // inference workload): seed, rebuild the model from its config (every field written out),
    // load SafeTensors, forward in eval mode, with and without noGrad. All of it in the module
    // init() loaded: `deferred` stays 'pending' (the deferred one is ~0.9 MB).
    const [{ init }, main] = await Promise.all([import('kiln-dl/inference'), import('kiln-dl')]);
    const trainer = await main.init();
    const trained = trainer.nn.sequential({ layers: [{ type: 'linear', dInput: 8, dOutput: 16 }, { type: 'gelu' },
      { type: 'dropout', prob: 0.1 }, { type: 'linear', dInput: 16, dOutput: 3 }] }, { seed: 3 });
    const config = trained.config;
    const bytes = trained.saveSafetensors();
    trained.dispose();
    const kiln = await init();
    expect(kiln.backendInfo().deferred).toBe('pending');
    kiln.seed(1);
    const model = kiln.nn.sequential(config);
    model.loadSafetensors(bytes);
    const x = () => kiln.Tensor.fromData([INPUT[1]]);
    model.eval();
    const a = kiln.tidy(() => model.forward(x()).toArray());
    const b = kiln.noGrad(() => kiln.tidy(() => model.forward(x()).toArray()));
    expect(b).toEqual(a);
    expect(a[0]).toHaveLength(3);
    model.dispose();
    expect(kiln.backendInfo().deferred).toBe('pending');
    expect(kiln.memory().tensors).toBe(0);
  });

  it('runs on the inner backend, as Burn\'s inference: no graph, dropout the identity in either mode', async () => {
    const [{ init }, main] = await Promise.all([import('kiln-dl/inference'), import('kiln-dl')]);
    const kiln = await init();
    // Its tensors are Cpu's, not Autodiff<Cpu>'s (bindings/js_tensor.hpp KILN_JS_NO_AUTODIFF).
    expect(kiln.backendInfo().backend).toBe('cpu');
    const stateHint = /: kiln-dl\/inference runs models on the inner backend and records no graph, as Burn's inference does; gradients and training are kiln-dl's: import \{ init \} from 'kiln-dl'$/;
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([[1, -2], [0.5, 4]]);
      expect(x.isRequireGrad).toBe(false);
      expectKilnError(kiln, () => x.requireGrad(), 'State', new RegExp(`^requireGrad${stateHint.source}`));
      expectKilnError(kiln, () => x.mul(x).sum().backward(), 'State', new RegExp(`^backward${stateHint.source}`));
      expect(x.detach().toArray()).toEqual([[1, -2], [0.5, 4]]);
      expect(x.setRequireGrad(false).toArray()).toEqual([[1, -2], [0.5, 4]]);
      // norm, var and einsum (written for Autodiff<Cpu> in the engine: run here on an untracked
      // one), by hand: |(3, 4)| = 5; var([1, 2, 3, 4]) = 5/3 (correction 1); x·xᵀ.
      expect(kiln.Tensor.fromData([3, 4]).norm().item()).toBeCloseTo(5, 6);
      expect(kiln.Tensor.fromData([1, 2, 3, 4]).var().item()).toBeCloseTo(5 / 3, 6);
      expect(kiln.Tensor.einsum('ij,kj->ik', x, x).toArray()).toEqual([[5, -7.5], [-7.5, 16.25]]);
      // A kiln.Param is a tensor there too (its requiresGrad flag is kept, as Burn's Param's).
      const p = new kiln.Param(kiln.Tensor.fromData([2, 3]));
      expect(p.requiresGrad).toBe(true);
      expect(p.mul(p).toArray()).toEqual([4, 9]);
      p.dispose();
    });
    // A model with dropout: on a backend without autodiff dropout is the identity (Burn's rule,
    // kiln/nn/dropout.hpp), so train() and eval() give the same output, and it equals kiln-dl's
    // eval-mode forward (which runs the model's valid() copy on Cpu) bit for bit.
    const spec = { layers: [{ type: 'linear', dInput: 8, dOutput: 16 }, { type: 'relu' },
      { type: 'dropout', prob: 0.5 }, { type: 'linear', dInput: 16, dOutput: 3 }] };
    const trainer = await main.init();
    const reference = trainer.nn.sequential(spec, { seed: 5 });
    reference.eval();
    const want = trainer.tidy(() => reference.forward(trainer.Tensor.fromData(INPUT)).toArray());
    const model = kiln.nn.sequential(spec);
    model.loadSafetensors(reference.saveSafetensors());
    reference.dispose();
    model.train();
    expect(kiln.tidy(() => model.forward(kiln.Tensor.fromData(INPUT)).toArray())).toEqual(want);
    model.eval();
    expect(kiln.tidy(() => model.forward(kiln.Tensor.fromData(INPUT)).toArray())).toEqual(want);
    model.dispose();
    expect(kiln.memory().tensors).toBe(0);
  });

  it('refuses threads, several threads and the full engine with Config, wrong types with Type', async () => {
    const mod = await import('kiln-dl/inference');
    const kiln = { KilnError: mod.KilnError };
    await expectKilnRejection(kiln, mod.init({ threads: true }), 'Config', /^init \(kiln-dl\/inference\): this entry loads the single-thread core engine; for threads use kiln-dl/);
    await expectKilnRejection(kiln, mod.init({ numThreads: 2 }), 'Config', 'init (kiln-dl/inference): this entry runs 1 thread, got numThreads 2');
    await expectKilnRejection(kiln, mod.init({ engine: 'full' }), 'Config', /^init \(kiln-dl\/inference\): this entry loads the core engine, got engine "full"/);
    await expectKilnRejection(kiln, mod.init({ threads: 'yes' }), 'Type', 'init (kiln-dl/inference): threads must be true, false or \'auto\', got the string "yes"');
    await expectKilnRejection(kiln, mod.init(null), 'Type', 'init (kiln-dl/inference): options must be an object, got null');
  });
});
