// Internal: init({ backend: 'webgpu' | 'auto' })'s half that only the webgpu backend needs
// (issue 21): asking the browser for a GPU and loading the webgpu engine (dist/kiln-webgpu.*)
// on it. index.ts imports this module dynamically, so pages on the cpu backend never fetch it.
import type { InitOptions, Kiln } from './api.js';
import { KilnError } from './errors.js';
import { finishModule } from './module.js';
import type { RawTensor } from './raw.js';
import { describe } from './select.js';

/** init()'s `backend`. */
export type BackendName = 'cpu' | 'webgpu';

/**
 * Checks init()'s `backend` option (default 'cpu') against the options it cannot go with.
 * @throws KilnError `Type` for a value other than 'cpu', 'webgpu' or 'auto'; `Config` for
 *   'webgpu' with engine 'full', threads: true or relaxedSimd: true (the webgpu engine is one
 *   build: the core profile's parts on the Wgpu backend).
 */
export function checkBackendOption(opts: { backend?: unknown; engine?: unknown; threads?: unknown; relaxedSimd?: unknown }): 'cpu' | 'webgpu' | 'auto' {
  const backend = opts.backend ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'webgpu' && backend !== 'auto') {
    throw new KilnError('Type', `init: backend must be 'cpu', 'webgpu' or 'auto', got ${describe(backend)}`);
  }
  if (backend === 'webgpu') {
    const clash = opts.engine === 'full' ? "engine: 'full'" : opts.threads === true ? 'threads: true' : opts.relaxedSimd === true ? 'relaxedSimd: true' : null;
    if (clash) throw new KilnError('Config', `init: backend 'webgpu' cannot go with ${clash} (those choose builds of the cpu backend)`);
  }
  return backend;
}


/** A WebGPU device for the webgpu engine, or why there is none. */
export type GpuRequest =
  | { device: GPUDeviceLike; adapter: string; reason?: undefined }
  | { device?: undefined; adapter?: undefined; reason: string };

/** The parts of a GPUDevice init() touches (the engine's glue uses the rest). */
export interface GPUDeviceLike {
  readonly lost: Promise<unknown>;
  destroy(): void;
}

/**
 * Asks the browser for a GPU (navigator.gpu.requestAdapter, then requestDevice with the
 * adapter's own limits for buffer sizes). Resolves to the device and the adapter's name
 * ("vendor architecture/description", as GPUAdapterInfo gives them), or to why there is none:
 * no navigator.gpu (not a secure context, or a browser without WebGPU), no adapter, or
 * requestDevice failing.
 */
export async function requestGpu(): Promise<GpuRequest> {
  const gpu = (globalThis as { navigator?: { gpu?: { requestAdapter(): Promise<unknown> } } }).navigator?.gpu;
  if (!gpu) return { reason: 'this environment has no navigator.gpu (WebGPU needs a browser that has it, in a secure context: https or localhost)' };
  let adapter: { info?: Record<string, string>; limits: Record<string, number>; requestDevice(d?: unknown): Promise<GPUDeviceLike> } | null;
  try {
    adapter = (await gpu.requestAdapter()) as typeof adapter;
  } catch (e) {
    return { reason: `navigator.gpu.requestAdapter() failed: ${(e as Error)?.message ?? String(e)}` };
  }
  if (!adapter) return { reason: 'navigator.gpu.requestAdapter() found no adapter' };
  const info = adapter.info ?? {};
  const name = [info.vendor, info.architecture, info.description || info.device].filter((x) => x).join(' ') || 'unknown adapter';
  try {
    const device = await adapter.requestDevice({
      requiredLimits: {
        maxBufferSize: adapter.limits.maxBufferSize,
        maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      },
    });
    return { device, adapter: name };
  } catch (e) {
    return { reason: `requestDevice() on ${name} failed: ${(e as Error)?.message ?? String(e)}` };
  }
}

/** The webgpu engine (dist/kiln-webgpu.*) on `device`; see init's `backend`. */
export async function initWebgpu(opts: InitOptions, device: GPUDeviceLike, adapter: string): Promise<Kiln> {
  const { threads: _threads, numThreads: _numThreads, relaxedSimd: _relaxedSimd, engine: _engine, backend: _backend, ...moduleOpts } = opts;
  const wasmUrl = new URL('kiln-webgpu.wasm', import.meta.url);
  const { default: createModule } = await import('./kiln-webgpu.mjs');
  const module = await createModule({
    locateFile: (path: string) => (path.endsWith('.wasm') ? wasmUrl.href : path),
    ...moduleOpts,
    // The device the engine's glue (bindings/webgpu/kgpu.js) runs every kernel on.
    kilnGpuDevice: device,
  });
  const kiln = finishModule(module, opts, { maxThreads: 1, reason: `webgpu backend on ${adapter}`, engine: 'webgpu', adapter });
  // The Learner's synchronous reads (this instance's bound class only; the messages live in
  // this chunk, which cpu pages never fetch): State naming the asynchronous way.
  const learner = (kiln as unknown as { Learner: { prototype: Record<string, unknown> } }).Learner.prototype;
  for (const [name, instead] of [
    ['predict', 'use model.forward(x) and `await output.data()`'],
    ['evaluate', 'give fit() validationData (its validLoss and validAccuracy), or compute the loss and `await loss.data()`'],
  ]) {
    learner[name] = function () {
      throw new KilnError('State', `Learner.${name}: the webgpu backend reads tensors asynchronously: ${instead}`);
    };
  }
  const raw = module as unknown as {
    tGpuReadInfo(h: RawTensor): { buffer: number; bytes: number; dtype: number; numel: number };
    kgRead(buffer: number, bytes: number): Promise<ArrayBuffer>;
  };
  // Tensor.data(): the buffer's bytes, copied back through a staging buffer (kgpu.js).
  (kiln as unknown as { _internals: { engine: { asyncRead: unknown } } })._internals.engine.asyncRead = async (h: RawTensor) => {
    const info = raw.tGpuReadInfo(h);
    let bytes: ArrayBuffer;
    try {
      bytes = await raw.kgRead(info.buffer, Math.max(info.bytes, 4));
    } catch (e) {
      const err = e as { code?: string; message?: string };
      // `Index`: a device check found a bad value (kgpu.js KG.checkError; its message names the op).
      if (err.code === 'Index') throw new KilnError('Index', err.message ?? String(e));
      throw new KilnError(err.code === 'OutOfMemory' ? 'OutOfMemory' : 'Device', `data: ${err.message ?? String(e)}`);
    }
    if (info.dtype === 0) return new Float32Array(bytes, 0, info.numel);
    if (info.dtype === 1) return new Int32Array(bytes, 0, info.numel);
    return Uint8Array.from(new Uint32Array(bytes, 0, info.numel));
  };
  return kiln;
}
