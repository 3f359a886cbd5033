// The playground's backend switch (issue 21), the parts that run without a GPU:
// - probeGpu (web/src/backend.js): the adapter's name from GPUAdapterInfo, or why there is none;
// - engine.js's GPU session on an engine that lacks the Learner (KilnError `State`: the reason
//   in trainBlocked, the model kept for predictions) and gpuTrainBlocker (regularisation);
// - Session.predictAsync on the GPU path (forward in eval mode, softmax, await data()) equals
//   the Learner's predict, and Session.fit trains over Session.dataset, both run here on the
//   cpu engine (what the webgpu engine runs once kiln.Learner works there).
import { describe, it, expect, beforeAll } from 'vitest';
import { probeGpu, BackendSwitch } from '../../../web/src/backend.js';
import { loadEngine, Engine, gpuTrainBlocker } from '../../../web/src/engine.js';
import { generateToy } from '../../../web/src/datasets.js';

describe('BackendSwitch.describe (the engine line)', () => {
  it('names the threads, the SIMD arch and, for a relaxed-SIMD build, the FMA', () => {
    const base = { simd: true, arch: 'sse4.1', threads: 2, engine: 'full' };
    expect(BackendSwitch.describe({ ...base, build: 'simd-threads-relaxed' }))
      .toBe('Engine: kiln-dl, WebAssembly SIMD (sse4.1) with FMA (relaxed SIMD), 2 threads, in a Web Worker.');
    expect(BackendSwitch.describe({ ...base, build: 'simd-threads' }))
      .toBe('Engine: kiln-dl, WebAssembly SIMD (sse4.1), 2 threads, in a Web Worker.');
    expect(BackendSwitch.describe({ ...base, threads: 1, build: 'simd-relaxed' })).toContain('with FMA (relaxed SIMD), 1 thread,');
    expect(BackendSwitch.describe({})).toBe('Engine: kiln-dl, WebAssembly, 1 thread, in a Web Worker.');
  });
});

describe('probeGpu', () => {
  it('names the adapter (vendor, architecture, description)', async () => {
    const nav = { gpu: { requestAdapter: async () => ({ info: { vendor: 'google', architecture: 'swiftshader', description: 'SwiftShader device' } }) } };
    expect(await probeGpu(nav)).toEqual({ adapter: 'google swiftshader SwiftShader device' });
  });
  it('says why there is no GPU', async () => {
    expect((await probeGpu({})).reason).toMatch(/no WebGPU \(navigator\.gpu/);
    expect((await probeGpu({ gpu: { requestAdapter: async () => null } })).reason).toMatch(/no GPU adapter/);
    expect((await probeGpu({ gpu: { requestAdapter: async () => { throw new Error('blocked'); } } })).reason).toMatch(/requestAdapter\(\) failed: blocked/);
  });
});

describe('the GPU session', () => {
  let cpu;
  const spec = { layers: [{ type: 'linear', dInput: 2, dOutput: 8 }, { type: 'tanh' }, { type: 'linear', dInput: 8, dOutput: 2 }] };
  const settings = { opt: 'adam', lr: 0.03, momentum: 0, wd: 0, seed: 3 };
  beforeAll(async () => {
    cpu = await loadEngine();
  });

  it('keeps the model and says why when the engine has no Learner (State)', () => {
    const state = Object.assign(new Error('kiln.optim.adam is not in the webgpu engine yet (it has ...)'), { code: 'State' });
    // The cpu engine's kiln with the webgpu engine's refusal of the optimizers.
    const kiln = Object.create(cpu.kiln, { optim: { value: { adam: () => { throw state; } } } });
    const gpu = Object.assign(new Engine(kiln), { gpu: true });
    const s = gpu.createSession(spec, settings);
    expect(s.gpu).toBe(true);
    expect(s.trainBlocked).toMatch(/does not have yet \(kiln\.optim\.adam is not in the webgpu engine yet\)$/);
    expect(s.model.numParams).toBe(42);
    expect(() => s.predict(new Float32Array(2))).toThrow(/predictAsync/);
    return expect(s.fit(null, { epochs: 1, batchSize: 4 })).rejects.toMatchObject({ code: 'State' });
  });

  it('refuses regularisation (a custom trainStep) on the GPU', () => {
    expect(gpuTrainBlocker({ reg: 'l2', regRate: 0.003 })).toMatch(/regularisation/);
    expect(gpuTrainBlocker({ reg: 'l2', regRate: 0 })).toBeNull();
    expect(gpuTrainBlocker({})).toBeNull();
    const gpu = Object.assign(new Engine(cpu.kiln), { gpu: true });
    const s = gpu.createSession(spec, { ...settings, reg: 'l1', regRate: 0.01 });
    expect(s.trainBlocked).toMatch(/regularisation/);
    s.dispose();
  });

  it('predicts with async reads as the Learner does, and trains with fit', async () => {
    const toy = generateToy({ kind: 'xor', n: 200, noise: 0, seed: 5 });
    const ref = cpu.createSession(spec, settings);
    const gpu = Object.assign(new Engine(cpu.kiln), { gpu: true });
    const s = gpu.createSession(spec, settings);
    expect(s.trainBlocked).toBeNull();
    const want = ref.predict(toy.x);
    const got = await s.predictAsync(toy.x, toy.n, 64); // in chunks of 64 (the last one 8)
    expect(got.length).toBe(want.length);
    for (let i = 0; i < want.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-5);
    // The CPU session's predictAsync is its predict.
    expect(Array.from(await ref.predictAsync(toy.x, toy.n))).toEqual(Array.from(want));
    const data = s.dataset(toy.x, toy.y, 2, 2);
    const batches = [];
    let epochs = 0;
    await s.fit(data, { epochs: 60, batchSize: 16, onBatchEnd: (log) => batches.push(log.batch), onEpochEnd: () => epochs++ });
    expect(epochs).toBe(60);
    expect(Math.max(...batches)).toBe(13); // ceil(200 / 16)
    const after = await s.predictAsync(toy.x, toy.n);
    let correct = 0;
    for (let i = 0; i < toy.n; i++) if ((after[2 * i + 1] > after[2 * i] ? 1 : 0) === toy.y[i]) correct++;
    expect(correct / toy.n).toBeGreaterThan(0.9);
    data.dispose();
    s.dispose();
    ref.dispose();
  });
});
