// The Export menu's generators (web/src/export/*.js), pure JS: float literals that read back
// as the same float32, the set-up checks, the layer mapping to torch.nn and to the C++ JSON
// spec, the tfp fields (features, regularisation, regression) in all three programs, and the
// batch order the programs re-create (Python's copy run by /usr/bin/python3 against the
// page's own rng.js). The programs themselves are run in export_run.test.mjs and the e2e suite.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { f32Text, wrapItems, snake } from '../../../web/src/export/format.js';
import { exportSetup, setupFeatures, exportName, headerLines, modelWords } from '../../../web/src/export/setup.js';
import { torchLayer, pytorchScript } from '../../../web/src/export/pytorch.js';
import { kilnJsScript } from '../../../web/src/export/kilnjs.js';
import { kilnCppProgram, cppLayerJson } from '../../../web/src/export/kilncpp.js';
import { TARGETS, programFile, weightsFile } from '../../../web/src/export/targets.js';
import { describeModel, CNN_PRESET } from '../../../web/src/modelspec.js';
import { defaultState } from '../../../web/src/state.js';
import { createRng } from '../../../web/src/rng.js';

/** A small toy view: n training and m test points with labels 0/1 (or targets). */
function view(n = 6, m = 4, regression = false) {
  const pts = (k, off) => Float32Array.from({ length: 2 * k }, (_, i) => Math.fround(Math.sin(i + off) * 0.9));
  const lab = (k) => (regression ? Float32Array.from({ length: k }, (_, i) => Math.fround((i % 5) / 5 - 0.4)) : Int32Array.from({ length: k }, (_, i) => i % 2));
  return { trainX: pts(n, 0), trainY: lab(n), testX: pts(m, 100), testY: lab(m) };
}

function toySetup(over = {}, { features = ['x1', 'x2'], outputs = 2, check = true } = {}) {
  const state = { ...defaultState('xor'), features, ...over };
  const desc = describeModel(state.layers, { features: features.length, classes: outputs });
  const v = view(6, 4, outputs === 1);
  return exportSetup({
    state,
    spec: desc.spec,
    view: v,
    check: check ? { count: 4, values: Float32Array.from({ length: 4 * outputs }, (_, i) => Math.fround(i / 10)) } : null,
    link: 'data=xor',
  });
}

describe('float literals', () => {
  it('write the shortest decimal that reads back as the same float32 through a double', () => {
    expect(f32Text(0.1)).toBe('0.1');
    expect(f32Text(Math.fround(0.1))).toBe('0.1');
    expect(f32Text(3)).toBe('3');
    expect(f32Text(-0)).toBe('-0');
    expect(f32Text(Math.fround(1e-7))).toBe('1e-7');
    const rng = createRng(5);
    for (let i = 0; i < 2000; i++) {
      const v = Math.fround((rng.next() - 0.5) * 10 ** Math.floor(rng.next() * 12 - 6));
      const s = f32Text(v);
      expect(Math.fround(Number(s))).toBe(v);
      expect(s.replace(/^-|e.*$|\./g, '').replace(/^0+/, '').length).toBeLessThanOrEqual(9);
    }
  });

  it('refuse values that are not finite', () => {
    expect(() => f32Text(NaN)).toThrow(/non-finite value NaN/);
    expect(() => f32Text(Infinity)).toThrow(/non-finite/);
  });

  it('wrap items into lines of at most the width', () => {
    const text = wrapItems(Array.from({ length: 50 }, (_, i) => String(i * 1000)), '  ', 40);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(text.replace(/\s/g, '').split(',').map(Number)).toEqual(Array.from({ length: 50 }, (_, i) => i * 1000));
  });

  it('snake-cases the JS spec keys', () => {
    expect(snake('dInput')).toBe('d_input');
    expect(snake('maxPool2d')).toBe('max_pool2d');
    expect(snake('negativeSlope')).toBe('negative_slope');
  });
});

describe('exportSetup', () => {
  it('reads the tfp fields with their defaults', () => {
    const s = toySetup();
    expect(s.features).toEqual(['x1', 'x2']);
    expect(s.reg).toBe('none');
    expect(s.regRate).toBe(0);
    expect(s.task).toBe('classification');
    expect(s.name).toBe('kiln_xor');
    expect(s.opt).toEqual({ kind: 'adam', lr: 0.01, momentum: 0.9, wd: 0 });
  });

  it('orders the features as FEATURES, whatever the click order', () => {
    expect(setupFeatures({ data: 'xor', features: ['sinx2', 'x1', 'x1sq'] })).toEqual(['x1', 'x1sq', 'sinx2']);
    expect(setupFeatures({ data: 'mnist' })).toEqual([]);
    expect(() => setupFeatures({ data: 'xor', features: ['x3'] })).toThrow(/export: unknown feature "x3"/);
    expect(() => setupFeatures({ data: 'xor', features: [] })).toThrow(/export: choose at least one input feature/);
  });

  it('names the files after the data set', () => {
    expect(exportName('mgauss')).toBe('kiln_mgauss');
    expect(exportName('csv')).toBe('kiln_csv');
  });

  it('refuses what does not fit, saying what', () => {
    const state = defaultState('xor');
    const spec = describeModel(state.layers, { features: 2, classes: 2 }).spec;
    expect(() => exportSetup({ state, spec: null, view: view() })).toThrow(/model is not valid/);
    expect(() => exportSetup({ state, spec, view: null })).toThrow(/data are not ready/);
    expect(() => exportSetup({ state: { ...state, features: ['x1', 'x2', 'x1sq'] }, spec, view: view() })).toThrow(/reads 2 inputs but the set-up gives 3 \(x1, x2, x1sq\)/);
    expect(() => exportSetup({ state: { ...state, data: 'plane' }, spec, view: view() })).toThrow(/regression model has 1 output, this one 2/);
    expect(() => exportSetup({ state: { ...state, reg: 'l3' }, spec, view: view() })).toThrow(/unknown regularisation "l3"/);
    expect(() => exportSetup({ state, spec, view: view(), check: { count: 5, values: new Float32Array(10) } })).toThrow(/check holds 10 values for 5 items/);
  });

  it('names the model in the title', () => {
    const MNIST = { features: 784, classes: 10, image: [1, 28, 28] };
    expect(modelWords(describeModel(CNN_PRESET, MNIST).spec.layers)).toBe('2 conv hidden layers');
    expect(modelWords(describeModel([...CNN_PRESET, { kind: 'dense', units: 8, act: 'relu', dropout: 0 }], MNIST).spec.layers)).toBe('2 conv + 1 dense hidden layers');
    expect(modelWords(describeModel([], { features: 2, classes: 2 }).spec.layers)).toBe('a linear model');
    expect(toySetup({ layers: [{ kind: 'dense', units: 3, act: 'relu', dropout: 0 }] }).title).toBe('XOR, 1 hidden layer');
  });

  it('keeps regRate only with a regularisation', () => {
    expect(toySetup({ reg: 'none', regRate: 0.3 }).regRate).toBe(0);
    expect(toySetup({ reg: 'l1', regRate: 0.3 }).regRate).toBe(0.3);
  });

  it('describes the set-up in the header', () => {
    const lines = headerLines(toySetup({ reg: 'l2', regRate: 0.01, opt: 'sgd' }, { features: ['x1', 'x2', 'sinx1'] }), 'PyTorch');
    expect(lines[0]).toBe('XOR, 2 hidden layers: exported from the Kiln playground as PyTorch.');
    expect(lines).toContain('Inputs:     x1, x2, sin(x1)');
    expect(lines).toContain('Loss:       cross-entropy (mean over the batch) + 0.01 · Σ ½·w² over the weights (not biases) of the linear and conv layers');
    expect(lines).toContain('Optimizer:  SGD (lr 0.01, momentum 0.9, weight decay 0)');
    expect(lines).toContain("Data:       the page's 6 training and 4 test points, exactly");
  });
});

describe('layers', () => {
  it('map to torch.nn modules with the same parameters', () => {
    expect(torchLayer({ type: 'linear', dInput: 2, dOutput: 8, bias: true })).toBe('nn.Linear(2, 8)');
    expect(torchLayer({ type: 'leakyRelu', negativeSlope: 0.01 })).toBe('nn.LeakyReLU(0.01)');
    expect(torchLayer({ type: 'gelu' })).toBe('nn.GELU()');
    expect(torchLayer({ type: 'dropout', prob: 0.25 })).toBe('nn.Dropout(0.25)');
    expect(torchLayer({ type: 'reshape', shape: [1, 28, 28] })).toBe('nn.Unflatten(1, (1, 28, 28))');
    expect(torchLayer({ type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], stride: [1, 1], padding: 'same' })).toBe("nn.Conv2d(1, 8, kernel_size=(3, 3), padding='same')");
    expect(torchLayer({ type: 'maxPool2d', kernelSize: [2, 2] })).toBe('nn.MaxPool2d(2)');
    expect(torchLayer({ type: 'avgPool2d', kernelSize: [2, 2] })).toBe('nn.AvgPool2d(2)');
    expect(() => torchLayer({ type: 'lstm' })).toThrow(/"lstm" has no PyTorch counterpart/);
  });

  it('map to the C++ SequentialConfig JSON (snake_case)', () => {
    expect(cppLayerJson({ type: 'linear', dInput: 2, dOutput: 8, bias: true })).toBe('{"type":"linear","d_input":2,"d_output":8,"bias":true}');
    expect(cppLayerJson({ type: 'maxPool2d', kernelSize: [2, 2] })).toBe('{"type":"max_pool2d","kernel_size":[2,2]}');
    expect(cppLayerJson({ type: 'leakyRelu', negativeSlope: 0.01 })).toBe('{"type":"leaky_relu","negative_slope":0.01}');
  });

  it('keep the spec order in every program, so the keys are "<index>.weight"', () => {
    const s = toySetup({ layers: [{ kind: 'dense', units: 8, act: 'tanh', dropout: 0.1 }] });
    const py = pytorchScript(s);
    expect(py).toMatch(/nn\.Linear\(2, 8\),\s+# 0\n\s+nn\.Tanh\(\),\s+# 1\n\s+nn\.Dropout\(0\.1\),\s+# 2\n\s+nn\.Linear\(8, 2\),\s+# 3/);
    expect(kilnJsScript(s)).toContain('{"type":"dropout","prob":0.1}, // 2');
    expect(kilnCppProgram(s)).toContain('{"type":"dropout","prob":0.1},\n    {"type":"linear","d_input":8,"d_output":2,"bias":true}\n]})json"');
  });
});

describe('the tfp fields in the programs', () => {
  const s = toySetup({ reg: 'l1', regRate: 0.003, opt: 'sgd', momentum: 0.5, wd: 0.001 }, { features: ['x1', 'x2', 'x1sq', 'x2sq', 'x1x2', 'sinx1', 'sinx2'] });

  it('features in FEATURES order, computed in float64 then float32', () => {
    expect(pytorchScript(s)).toContain('torch.stack([x1, x2, x1 * x1, x2 * x2, x1 * x2, torch.sin(x1), torch.sin(x2)], dim=1).float()');
    expect(kilnJsScript(s)).toContain('out.set([a, b, a * a, b * b, a * b, Math.sin(a), Math.sin(b)], i * INPUT_SIZE);');
    expect(kilnCppProgram(s)).toContain('for (const double v : {a, b, a * a, b * b, a * b, std::sin(a), std::sin(b)}) out.push_back(static_cast<float>(v));');
  });

  it('L1 / L2 over the weights only, times the rate', () => {
    expect(pytorchScript(s)).toMatch(/REGULARIZATION = 'l1'[^\n]*\nREGULARIZATION_RATE = 0\.003/);
    expect(pytorchScript(s)).toContain("return sum(p.abs().sum() for name, p in model.named_parameters() if name.endswith('.weight'))");
    expect(kilnJsScript(s)).toContain(".filter(([name]) => name.endsWith('.weight'))\n    .map(([, p]) => p.abs().sum());");
    expect(kilnCppProgram(s)).toContain('auto term = p.val().abs().sum();');
    const l2 = toySetup({ reg: 'l2', regRate: 0.1 });
    expect(pytorchScript(l2)).toContain('0.5 * p.pow(2).sum() for name, p');
    expect(kilnJsScript(l2)).toContain('p.mul(p).sum().mul(0.5)');
    expect(kilnCppProgram(l2)).toContain('p.val().powf_scalar(2).sum().mul_scalar(0.5)');
  });

  it('SGD with PyTorch settings (the C++ config sets dampening 0: Burn defaults to 0.1)', () => {
    expect(pytorchScript(s)).toContain('torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)');
    expect(pytorchScript(s)).toMatch(/MOMENTUM = 0\.5\nWEIGHT_DECAY = 0\.001/);
    expect(kilnJsScript(s)).toContain('kiln.optim.sgd({ lr: LR, momentum: MOMENTUM, weightDecay: WEIGHT_DECAY })');
    expect(kilnCppProgram(s)).toContain('optim::MomentumConfig().with_momentum(kMomentum).with_dampening(0).with_nesterov(false)');
    const adam = toySetup({ opt: 'adamw', wd: 0.01 });
    expect(kilnCppProgram(adam)).toContain('.with_epsilon(1e-8)');
    expect(pytorchScript(adam)).toContain('torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=WEIGHT_DECAY)');
  });

  it('regression: MSE on one output, float targets, raw outputs', () => {
    const r = toySetup({ data: 'plane' }, { outputs: 1 });
    expect(r.task).toBe('regression');
    const py = pytorchScript(r);
    expect(py).toContain('LOSS = nn.MSELoss()');
    expect(py).toContain('return out\n');
    expect(py).not.toContain('torch.softmax');
    expect(py).toMatch(/TRAIN_TARGETS = \[\n {4}-0\.4, -0\.2, 0, 0\.2, 0\.4, -0\.4\n\]/);
    const js = kilnJsScript(r);
    expect(js).toContain("kiln.loss.mse()");
    expect(js).toContain('const TRAIN_TARGETS = Float32Array.from([');
    const cpp = kilnCppProgram(r);
    expect(cpp).toContain('const nn::loss::MseLoss loss_fn;');
    expect(cpp).toContain('const std::vector<float> kTrainTargets = floats({');
  });
});

describe('the embedded data', () => {
  it('are the page points and outputs, exactly', () => {
    const s = toySetup();
    const py = pytorchScript(s);
    const list = (name) => new RegExp(`${name} = \\[\\n([^\\]]*)\\]`).exec(py)[1].split(',').map(Number);
    expect(Float32Array.from(list('TRAIN_POINTS'))).toEqual(s.toy.trainX);
    expect(Float32Array.from(list('TEST_POINTS'))).toEqual(s.toy.testX);
    expect(Int32Array.from(list('TRAIN_TARGETS'))).toEqual(s.toy.trainY);
    expect(Float32Array.from(list('PAGE_OUTPUTS'))).toEqual(s.check.values);
  });

  it('MNIST: read from the IDX files, no points embedded', () => {
    const state = { ...defaultState('mnist'), train: 1000, mtest: 200 };
    const desc = describeModel(state.layers, { features: 784, classes: 10, image: [1, 28, 28] });
    const s = exportSetup({ state, spec: desc.spec, view: { trainCount: 1000, testCount: 200 } });
    const py = pytorchScript(s);
    expect(py).toContain('TRAIN_IMAGES = 1000');
    expect(py).toContain("parser.add_argument('--mnist-dir'");
    expect(py).not.toContain('TRAIN_POINTS');
    expect(kilnJsScript(s)).toContain('const TEST_IMAGES = 200;');
    expect(kilnCppProgram(s)).toContain('constexpr std::size_t kTrainImages = 1000;');
  });
});

describe('targets', () => {
  it('name their files and how to run them', () => {
    const s = toySetup();
    expect(Object.values(TARGETS).map((t) => t.label)).toEqual(['PyTorch', 'Kiln JS', 'Kiln C++']);
    expect(programFile(s, 'kilncpp')).toBe('kiln_xor.cpp');
    expect(weightsFile(s)).toBe('kiln_xor.safetensors');
    expect(TARGETS.pytorch.run(s)[0]).toBe('python3 kiln_xor.py --weights kiln_xor.safetensors');
    expect(TARGETS.kilnjs.run({ ...s, name: 'kiln_mnist', mnist: { train: 100, test: 100 } })[1]).toBe('node kiln_mnist.mjs --weights kiln_mnist.safetensors --mnist-dir DIR');
  });
});

describe("the programs' batch order", () => {
  it("Python's page_order is the page's (web/src/rng.js as trainer.js seeds it)", () => {
    const py = pytorchScript(toySetup());
    const fn = /def page_order[\s\S]*?return order\n/.exec(py)[0];
    const cases = [[10, 1, 0], [57, 7, 3], [300, 2 ** 31 - 1, 199]];
    const out = execFileSync('python3', ['-c', `${fn}\nimport json\nprint(json.dumps([page_order(n, s, e) for n, s, e in ${JSON.stringify(cases)}]))`], { encoding: 'utf8' });
    const want = cases.map(([n, seed, epoch]) => {
      const order = Array.from({ length: n }, (_, i) => i);
      createRng((seed * 7919 + epoch) >>> 0).shuffle(order);
      return order;
    });
    expect(JSON.parse(out)).toEqual(want);
  });
});
