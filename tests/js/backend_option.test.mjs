// init()'s `backend` option (issue 21) in Node, which has no WebGPU: 'webgpu' rejects with
// KilnError `Device` saying so, 'auto' loads the cpu backend and says why in buildReason,
// 'cpu' is the default, other values and clashing options are refused before anything loads,
// and kiln-dl/inference refuses the webgpu backend pointing to kiln-dl. The option's browser
// side (the webgpu engine on a GPU) is tests/e2e/webgpu-api.e2e.mjs.
import { describe, expect, it } from 'vitest';
import { init } from '../../dist/node.js';
import { init as initInference } from '../../dist/inference_node.js';

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe("init({ backend }) in Node", () => {
  it("rejects 'webgpu' with Device: Node has no WebGPU", async () => {
    const e = await rejection(init({ backend: 'webgpu' }));
    expect(e.name).toBe('KilnError');
    expect(e.code).toBe('Device');
    expect(e.message).toBe("init: backend 'webgpu': Node has no WebGPU (navigator.gpu); the webgpu backend runs in browsers");
  });

  it("loads the cpu backend for 'auto', saying why", async () => {
    const kiln = await init({ backend: 'auto' });
    const info = kiln.backendInfo();
    expect(info.engine).toBe('core');
    expect(info.adapter).toBe(null);
    expect(info.backend).toBe('autodiff<cpu>');
    expect(info.buildReason.startsWith("cpu backend (backend 'auto': Node has no WebGPU); ")).toBe(true);
    // it computes: [1, 2] + [3, 4] = [4, 6] by hand, read synchronously and asynchronously
    const t = kiln.Tensor.fromData([1, 2]).add(kiln.Tensor.fromData([3, 4]));
    expect(Array.from(t.dataSync())).toEqual([4, 6]);
    expect(Array.from(await t.data())).toEqual([4, 6]);
    expect(await t.array()).toEqual([4, 6]);
  });

  it("defaults to the cpu backend", async () => {
    const kiln = await init();
    expect(kiln.backendInfo().adapter).toBe(null);
    expect(kiln.backendInfo().buildReason.includes('backend')).toBe(false);
    expect(await kiln.Tensor.fromData([[true, false]], { dtype: 'bool' }).array()).toEqual([[true, false]]);
  });

  it('refuses other values and options that choose cpu builds', async () => {
    const bad = await rejection(init({ backend: 'gpu' }));
    expect([bad.code, bad.message]).toEqual(['Type', "init: backend must be 'cpu', 'webgpu' or 'auto', got \"gpu\""]);
    for (const [opts, clash] of [[{ engine: 'full' }, "engine: 'full'"], [{ threads: true }, 'threads: true'], [{ relaxedSimd: true }, 'relaxedSimd: true']]) {
      const e = await rejection(init({ backend: 'webgpu', ...opts }));
      expect([e.code, e.message]).toEqual(['Config', `init: backend 'webgpu' cannot go with ${clash} (those choose builds of the cpu backend)`]);
    }
  });

  it('kiln-dl/inference refuses the webgpu backend, pointing to kiln-dl', async () => {
    const e = await rejection(initInference({ backend: 'webgpu' }));
    expect(e.code).toBe('Config');
    expect(e.message).toContain("the webgpu backend is kiln-dl's");
  });
});
