// Runs the Wgpu backend's op cases in a page (tests/e2e/webgpu.e2e.mjs serves it on 127.0.0.1
// with the harness build/wasm/webgpu/kiln-webgpu-harness.{mjs,wasm}). Every case runs the op
// on the Cpu and the Wgpu backend (tests/webgpu/harness.cpp) and compares:
//   - both throw: the same code and the same message (the checks are shared);
//   - both return: the same shape and dtype, i32/bool values equal, f32 values within
//     |gpu - cpu| <= abs + rel·|cpu| (the case's `tol`, default abs 1e-6, rel 1e-5), nan where
//     the Cpu has nan, infinities equal.
// Cases come from tests/webgpu/cases_*.mjs (each exports `cases`, see cases_creation.mjs). A
// case with a `run(M)` function runs itself and returns {failure (or null), skipped: [what
// was not run, and why]} (tests/webgpu/cases_shared.mjs: the PyTorch reference cases).
import createHarness from '/harness/kiln-webgpu-harness.mjs';

const DEFAULT_TOL = { abs: 1e-6, rel: 1e-5 };

function typed(dtype, buffer) {
  if (dtype === 'f32') return Array.from(new Float32Array(buffer));
  if (dtype === 'i32') return Array.from(new Int32Array(buffer));
  return Array.from(new Uint32Array(buffer));  // bool: one u32 per element
}

function compare(c, cpu, gpuShape, gpuDtype, gpu) {
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(cpu.shape, gpuShape)) return `shape: cpu ${JSON.stringify(cpu.shape)} vs gpu ${JSON.stringify(gpuShape)}`;
  if (cpu.dtype !== gpuDtype) return `dtype: cpu ${cpu.dtype} vs gpu ${gpuDtype}`;
  const tol = { ...DEFAULT_TOL, ...(c.tol ?? {}) };
  for (let i = 0; i < cpu.data.length; i++) {
    const want = cpu.data[i];
    const got = cpu.dtype === 'bool' ? Number(gpu[i] !== 0) : gpu[i];
    if (Number.isNaN(want)) {
      if (!Number.isNaN(got)) return `element ${i}: cpu nan vs gpu ${got}`;
    } else if (!Number.isFinite(want) || cpu.dtype !== 'f32') {
      if (got !== want) return `element ${i}: cpu ${want} vs gpu ${got}`;
    } else if (!(Math.abs(got - want) <= tol.abs + tol.rel * Math.abs(want))) {
      return `element ${i}: cpu ${want} vs gpu ${got} (|diff| ${Math.abs(got - want)})`;
    }
  }
  return null;
}

async function runCase(M, c) {
  const ids = c.inputs.map((t) => M.make(t.data, t.shape, t.dtype ?? 'f32'));
  try {
    const r = M.run(c.op, ids, JSON.stringify(c.attrs ?? {}));
    if (r.harnessError) return r.harnessError;
    if (r.cpuError || r.gpuError) {
      if (!r.cpuError) return `gpu threw ${r.gpuError.code}: ${r.gpuError.message}; cpu did not`;
      if (!r.gpuError) return `cpu threw ${r.cpuError.code}: ${r.cpuError.message}; gpu did not`;
      if (r.cpuError.code !== r.gpuError.code || r.cpuError.message !== r.gpuError.message) {
        return `errors differ: cpu ${r.cpuError.code}: ${r.cpuError.message} vs gpu ${r.gpuError.code}: ${r.gpuError.message}`;
      }
      if (!c.error) return `both threw ${r.cpuError.code}: ${r.cpuError.message} (the case expects results; name the code in \`error\` if the throw is the point)`;
      if (r.cpuError.code !== c.error) return `expected ${c.error}, both threw ${r.cpuError.code}`;
      return null;
    }
    if (c.error) return `expected ${c.error}, both returned`;
    const cpu = M.cpuResult(r.id);
    const info = M.gpuBuffer(r.id);
    if (c.readError) {
      // A device check (wgpu::check_flags) found a bad value: the first read rejects, once.
      let e = null;
      try { await M.kgRead(info.buffer, Math.max(info.bytes, 4)); } catch (x) { e = x; }
      if (e?.code !== c.readError || (c.readMessage && !c.readMessage.test(e.message))) {
        M.free(r.id);
        return `expected the read to reject with ${c.readError}${c.readMessage ? ` matching ${c.readMessage}` : ''}, got ${e ? `${e.code}: ${e.message}` : 'the values'}`;
      }
    }
    const bytes = await M.kgRead(info.buffer, Math.max(info.bytes, 4));
    const gpu = typed(info.dtype, bytes).slice(0, cpu.data.length);
    M.free(r.id);
    return compare(c, cpu, info.shape, info.dtype, gpu);
  } finally {
    for (const id of ids) M.free(id);
  }
}

window.runCases = async (modules) => {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) return { skipped: 'no WebGPU adapter' };
  const device = await adapter.requestDevice();
  const M = await createHarness({ kilnGpuDevice: device });
  const results = [];
  for (const name of modules) {
    const { cases } = await import(`/tests/webgpu/${name}`);
    for (const c of cases) {
      let failure, skipped;
      try {
        if (c.run) ({ failure, skipped } = await c.run(M));
        else failure = await runCase(M, c);
      } catch (e) {
        failure = `threw ${e?.name}: ${e?.message}`;
      }
      results.push({ module: name, name: c.name, failure, skipped });
    }
  }
  return { adapter: adapter.info?.description || adapter.info?.vendor || 'unknown', results, stats: M.kgStats() };
};
window.ready = true;
