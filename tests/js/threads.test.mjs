// Which build init() loads (bindings/js/select.js), the thread-count API in Node, and the
// threaded build's files. The threaded build itself runs in headless Chromium:
// tests/e2e/threads.e2e.mjs (scripts/test.sh).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, KilnError } from 'kiln-dl';
import { chooseBuild, detectEnvironment, DEFAULT_MAX_THREADS } from '../../dist/select.js';

const isolatedPage = {
  crossOriginIsolated: true, sharedMemory: true, workers: true, hardwareConcurrency: 8, node: false,
};
const plainPage = { ...isolatedPage, crossOriginIsolated: false };
const nodeEnv = { ...plainPage, node: true };

function expectKilnError(fn, code, text) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(KilnError);
  expect(error.code).toBe(code);
  expect(error.message).toContain(text);
}

describe('chooseBuild', () => {
  it("'auto' (the default) picks the threaded build in a cross-origin isolated page", () => {
    expect(chooseBuild({}, isolatedPage)).toEqual({ build: 'simd-threads', threads: DEFAULT_MAX_THREADS });
    expect(chooseBuild({ threads: 'auto' }, { ...isolatedPage, hardwareConcurrency: 2 }))
      .toEqual({ build: 'simd-threads', threads: 2 });
    expect(chooseBuild({ numThreads: 6 }, isolatedPage)).toEqual({ build: 'simd-threads', threads: 6 });
  });

  it("'auto' falls back to the SIMD build when anything is missing or one thread is wanted", () => {
    expect(chooseBuild({}, plainPage)).toEqual({ build: 'simd', threads: 1 });
    expect(chooseBuild({}, { ...isolatedPage, sharedMemory: false })).toEqual({ build: 'simd', threads: 1 });
    expect(chooseBuild({}, { ...isolatedPage, workers: false })).toEqual({ build: 'simd', threads: 1 });
    expect(chooseBuild({}, { ...isolatedPage, hardwareConcurrency: 1 })).toEqual({ build: 'simd', threads: 1 });
    expect(chooseBuild({ numThreads: 1 }, isolatedPage)).toEqual({ build: 'simd', threads: 1 });
    expect(chooseBuild({ numThreads: 3 }, nodeEnv)).toEqual({ build: 'simd', threads: 1 });
  });

  it('threads: true requires the threaded build and says what is missing', () => {
    expect(chooseBuild({ threads: true, numThreads: 1 }, isolatedPage)).toEqual({ build: 'simd-threads', threads: 1 });
    expectKilnError(() => chooseBuild({ threads: true }, plainPage), 'Config', 'not cross-origin isolated');
    expectKilnError(() => chooseBuild({ threads: true }, { ...isolatedPage, sharedMemory: false }), 'Config',
      'SharedArrayBuffer');
    expectKilnError(() => chooseBuild({ threads: true }, nodeEnv), 'Config', 'Node loads the single-threaded build');
  });

  it('threads: false never loads the threaded build', () => {
    expect(chooseBuild({ threads: false }, isolatedPage)).toEqual({ build: 'simd', threads: 1 });
    expect(chooseBuild({ threads: false, numThreads: 1 }, isolatedPage)).toEqual({ build: 'simd', threads: 1 });
    expectKilnError(() => chooseBuild({ threads: false, numThreads: 2 }, isolatedPage), 'Config', 'threads: false');
  });

  it('rejects wrong option types and thread counts', () => {
    expectKilnError(() => chooseBuild({ threads: 'yes' }, isolatedPage), 'Type', `threads must be true, false or 'auto', got "yes"`);
    expectKilnError(() => chooseBuild({ threads: 1 }, isolatedPage), 'Type', 'got number 1');
    expectKilnError(() => chooseBuild({ numThreads: 2.5 }, isolatedPage), 'Type', 'numThreads must be an integer');
    expectKilnError(() => chooseBuild({ numThreads: '2' }, isolatedPage), 'Type', 'numThreads must be an integer');
    expectKilnError(() => chooseBuild({ numThreads: 0 }, isolatedPage), 'Config', 'numThreads must be in [1, 64], got 0');
    expectKilnError(() => chooseBuild({ numThreads: 65 }, isolatedPage), 'Config', 'got 65');
  });
});

describe('detectEnvironment', () => {
  it('reads a global scope', () => {
    const fakeWindow = {
      crossOriginIsolated: true,
      SharedArrayBuffer,
      WebAssembly,
      Worker: function Worker() {},
      navigator: { hardwareConcurrency: 12 },
    };
    expect(detectEnvironment(fakeWindow)).toEqual({ ...isolatedPage, hardwareConcurrency: 12 });
    expect(detectEnvironment({ navigator: {} })).toEqual({
      crossOriginIsolated: false, sharedMemory: false, workers: false, hardwareConcurrency: 1, node: false,
    });
  });

  it('sees Node in Node', () => {
    expect(detectEnvironment().node).toBe(true);
  });
});

describe('init in Node', () => {
  let kiln;
  beforeAll(async () => {
    kiln = await init();
  });

  it('loads the single-threaded SIMD build', () => {
    expect(kiln.backendInfo()).toMatchObject({ build: 'simd', threads: 1, maxThreads: 1, simd: true });
  });

  it("loads it with threads: 'auto' and any numThreads, and with threads: false", async () => {
    const a = await init({ threads: 'auto', numThreads: 4 });
    expect(a.backendInfo()).toMatchObject({ build: 'simd', threads: 1 });
    const b = await init({ threads: false });
    expect(b.backendInfo()).toMatchObject({ build: 'simd', threads: 1 });
  });

  it('refuses threads: true and bad options before loading anything', async () => {
    await expect(init({ threads: true })).rejects.toMatchObject({ code: 'Config', name: 'KilnError' });
    await expect(init({ threads: 'on' })).rejects.toMatchObject({ code: 'Type' });
    await expect(init({ numThreads: 0 })).rejects.toMatchObject({ code: 'Config' });
  });

  it('setNumThreads accepts only 1 in this build', () => {
    kiln.setNumThreads(1);
    expect(kiln.backendInfo().threads).toBe(1);
    expectKilnError(() => kiln.setNumThreads(2), 'Config', 'this build (simd) runs 1 to 1 threads, got 2');
    expectKilnError(() => kiln.setNumThreads(1.5), 'Type', 'expected an integer');
  });
});

describe('the threaded build in dist/', () => {
  const dist = (name) => fileURLToPath(new URL(`../../dist/${name}`, import.meta.url));

  it('ships kiln-mt.mjs, kiln-mt.wasm, kiln-mt-relaxed.wasm and kiln-mt.worker.js, exported by package.json', () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'));
    for (const name of ['kiln-mt.mjs', 'kiln-mt.wasm', 'kiln-mt-relaxed.wasm', 'kiln-mt.worker.js']) {
      expect(existsSync(dist(name))).toBe(true);
      expect(pkg.exports[`./${name}`]).toBe(`./dist/${name}`);
    }
  });

  it('imports a shared memory and holds SIMD128 and atomic instructions', () => {
    const text = execFileSync('wasm-dis', [dist('kiln-mt.wasm')], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
    // (booleans: a failing toContain would print the whole disassembly)
    const sharedMemory = /\(import "\w+" "\w+" \(memory \$\S+ \(shared \d+ \d+\)\)\)/;
    expect(sharedMemory.test(text)).toBe(true);
    expect(text.includes('i32.atomic.rmw.cmpxchg')).toBe(true);
    expect(text.includes('memory.atomic.notify')).toBe(true);
    expect(text.includes('f32x4.mul')).toBe(true);
    const single = execFileSync('wasm-dis', [dist('kiln.wasm')], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
    // The memory's declaration, not text in data segments (messages say "shared storage").
    expect(/\(memory [^\n]*\(shared /.test(single)).toBe(false);
    expect(single.includes('i32.atomic.rmw.cmpxchg')).toBe(false);
  });

  it('sizes its worker pool from Module.kilnThreads (bindings/threads.pre.js)', () => {
    const js = readFileSync(dist('kiln-mt.mjs'), 'utf8');
    // (booleans: a failing toContain would print the whole file)
    expect(js.includes('var kilnPoolSize=Math.max(1,Math.min(64,(Module["kilnThreads"]|0)-1));')).toBe(true);
    expect(js.includes('var pthreadPoolSize=kilnPoolSize;')).toBe(true);
  });
});
