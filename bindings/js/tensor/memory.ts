// Memory and graph scopes of one engine instance: tidy / keep / dispose (TF.js's), noGrad
// (torch.no_grad), memory() and seed().
import { checkInt, describe, fail } from './checks.js';
import type { Engine, Scoped } from './engine.js';

/** kiln.memory(): the engine's memory, for leak checks (flat across a training loop). */
export interface MemoryInfo {
  /** Bytes held by live tensor buffers (shared buffers counted once). */
  bytes: number;
  /** Live JS Tensor objects (created and not disposed). */
  tensors: number;
  /** The WebAssembly memory size in bytes (grows, never shrinks). */
  heapBytes: number;
  /**
   * Bytes in use on the WebAssembly heap (buffers, graph nodes, ...), as the allocator's
   * `mallinfo().uordblks` counts them: the single-thread engines' emmalloc also counts block
   * headers (of free blocks too) and tails too small to split off, so this moves by tens to
   * hundreds of bytes with where blocks land; the threaded build's dlmalloc counts what is
   * allocated and not freed.
   */
  mallocBytes: number;
  /** Live tensor buffers. */
  buffers: number;
  /** Live autodiff graph nodes. */
  graphNodes: number;
  /** Largest `bytes` seen. */
  peakBytes: number;
  /** Buffers allocated since start. */
  totalAllocations: number;
  /**
   * The webgpu backend only (undefined on the cpu backend, whose tensors are the host buffers
   * above): bytes of the GPU storage buffers held now (tensors, gradients, optimizer state;
   * 4 bytes per element of every dtype, rounded up to 4). Buffers released to the engine's
   * reuse pool are not counted.
   */
  gpuBytes?: number;
  /** The webgpu backend only: GPU storage buffers held now. */
  gpuBuffers?: number;
  /** The webgpu backend only: the largest `gpuBytes` seen. */
  gpuPeakBytes?: number;
}

/** The functions of kiln that manage memory, bound to one engine instance. */
export function memoryApi(e: Engine) {
  const isOwned = (v: unknown): v is Scoped => v instanceof e.Tensor || v instanceof e.Gradients;

  function collect(value: unknown, keep: Set<Scoped>, depth: number): void {
    if (isOwned(value)) {
      keep.add(value);
      return;
    }
    if (depth > 8 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) collect(v, keep, depth + 1);
    } else if (value instanceof Map) {
      for (const v of value.values()) collect(v, keep, depth + 1);
    } else if (Object.getPrototypeOf(value) === Object.prototype) {
      for (const v of Object.values(value)) collect(v, keep, depth + 1);
    }
  }

  function endScope(scope: Set<Scoped>, keep: Set<Scoped>): void {
    const parent = e.scopes.length > 0 ? e.scopes[e.scopes.length - 1] : null;
    for (const obj of [...scope]) {
      if (keep.has(obj)) {
        obj._scope = parent;
        if (parent) parent.add(obj);
      } else {
        obj.dispose();
      }
    }
    scope.clear();
  }

  function tidy<T>(nameOrFn: string | (() => T), maybeFn?: () => T): T {
    const fn = typeof nameOrFn === 'function' ? nameOrFn : maybeFn;
    if (typeof fn !== 'function') throw fail('Type', `tidy: expected a function, got ${describe(fn)}`);
    const scope = new Set<Scoped>();
    e.scopes.push(scope);
    let result: T;
    try {
      result = fn();
    } catch (err) {
      e.scopes.pop();
      endScope(scope, new Set());
      throw err;
    }
    e.scopes.pop();
    if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
      endScope(scope, new Set());
      throw fail('State', 'tidy: fn returned a Promise; tidy only tracks synchronous code (await outside tidy, or dispose by hand)');
    }
    const keep = new Set<Scoped>();
    collect(result, keep, 0);
    endScope(scope, keep);
    return result;
  }

  function keep<T>(t: T): T {
    if (!isOwned(t)) throw fail('Type', `keep: expected a Tensor, got ${describe(t)}`);
    if (t._scope) {
      t._scope.delete(t);
      t._scope = null;
    }
    return t;
  }

  function dispose(value: unknown): void {
    const found = new Set<Scoped>();
    collect(value, found, 0);
    for (const t of found) t.dispose();
  }

  function noGrad<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw fail('Type', `noGrad: expected a function, got ${describe(fn)}`);
    const previous = e.raw.isGradEnabled();
    e.raw.setGradEnabled(false);
    try {
      return fn();
    } finally {
      e.raw.setGradEnabled(previous);
    }
  }

  function memory(): MemoryInfo {
    const m = e.raw.memoryStats();
    m.tensors = e.liveTensors;
    return m;
  }

  function seed(n: number): void {
    checkInt(n, 'seed', 'seed');
    e.raw.seed(n);
  }

  return { tidy, keep, dispose, noGrad, memory, seed };
}
