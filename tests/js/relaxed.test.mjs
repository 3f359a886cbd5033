// The relaxed-SIMD (FMA) build, dist/kiln-relaxed.wasm: what scripts/relax_wasm.mjs does to a
// module (checked on modules written here byte by byte, and on the shipped files), how init()
// chooses the build (select.ts), and, in a child Node with --experimental-wasm-relaxed-simd,
// that it is loaded there, that f32x4.relaxed_madd computes a·b + c, and that products, an
// MLP step and convolutions agree with the SIMD128 build within the float32 bounds of
// support/relaxed_checks.mjs. The Chromium side: tests/e2e/relaxed.e2e.mjs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KilnError } from '../../dist/errors.js';
import { chooseRelaxed, detectRelaxedSimd, RELAXED_SIMD_PROBE, relaxedWasmFile } from '../../dist/select.js';
import { relaxWasm, scanWasm } from '../../scripts/relax_wasm.mjs';

const dist = (f) => fileURLToPath(new URL(`../../dist/${f}`, import.meta.url));

/** A module with one function (v128 v128 v128) -> v128 whose body is `ops` (bytes) then `end`. */
function moduleWith(ops) {
  const body = [0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, ...ops, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,
    0x03, 0x02, 0x01, 0x00,
    0x0a, body.length + 2, 0x01, body.length, ...body,
  ]);
}
const PROTO_FMA = [0xfd, 0xaf, 0x01];
const FINAL_MADD = [0xfd, 0x85, 0x02];

describe('scripts/relax_wasm.mjs', () => {
  it('rewrites f32x4.fma (0xfd 0xaf) to f32x4.relaxed_madd (0xfd 0x105) in place', () => {
    // a blend of SIMD immediates around it: v128.const (16 bytes), shuffle, lane ops, memargs
    const ops = [0xfd, 0x0c, ...new Array(16).fill(0xaf), 0x1a, // v128.const of 0xaf bytes; drop
      ...PROTO_FMA, 0xfd, 0x1f, 0x01, 0x1a, // fma, f32x4.extract_lane 1, drop
      0x20, 0x00, 0x20, 0x01, ...PROTO_FMA];
    const input = moduleWith(ops);
    const { bytes, counts } = relaxWasm(input);
    expect(counts.relaxedMadd).toBe(2);
    expect(bytes.length).toBe(input.length);
    const diff = [...bytes].flatMap((b, i) => (b === input[i] ? [] : [i]));
    expect(diff.map((i) => input[i])).toEqual([0xaf, 0x01, 0xaf, 0x01]); // never the constant's bytes
    expect(bytes).toEqual(moduleWith([0xfd, 0x0c, ...new Array(16).fill(0xaf), 0x1a,
      ...FINAL_MADD, 0xfd, 0x1f, 0x01, 0x1a, 0x20, 0x00, 0x20, 0x01, ...FINAL_MADD]));
    expect(scanWasm(bytes).counts).toMatchObject({ relaxedMadd: 2, prototypeFma: 0 });
  });

  it('decodes the threaded build\'s atomics (0xfe): their memargs are skipped, an FMA after them rewritten', () => {
    // i32.const 0; i32.atomic.load (memarg 2 0x80 0x01 = offset 128, so the 0xaf-free memarg is multi-byte);
    // drop; atomic.fence; i32.const 0; i32.const 0; i32.const 1; i32.atomic.rmw.cmpxchg (0x48); drop; then the fma
    // then memory.atomic.notify (0x00), memory.atomic.wait32 (0x01) and wait64 (0x02), and the
    // range's last opcode, i64.atomic.rmw32.cmpxchg_u (0x4e), each with a memarg (not type-checked: the parser only decodes)
    const ops = [0x41, 0x00, 0xfe, 0x10, 0x02, 0x80, 0x01, 0x1a, 0xfe, 0x03, 0x00,
      0x41, 0x00, 0x41, 0x00, 0x41, 0x01, 0xfe, 0x48, 0x02, 0x00, 0x1a,
      0xfe, 0x00, 0x02, 0x00, 0xfe, 0x01, 0x02, 0x04, 0xfe, 0x02, 0x03, 0x08, 0xfe, 0x4e, 0x02, 0x00, ...PROTO_FMA];
    const { bytes, counts } = relaxWasm(moduleWith(ops));
    expect(counts.relaxedMadd).toBe(1);
    expect(bytes).toEqual(moduleWith([...ops.slice(0, -3), ...FINAL_MADD]));
  });

  it('refuses other prototype relaxed opcodes, final relaxed opcodes, gaps and truncated code', () => {
    expect(() => relaxWasm(moduleWith([0xfd, 0xb0, 0x01]))).toThrow(/relaxed-SIMD prototype instruction f32x4\.fms/);
    expect(() => relaxWasm(moduleWith([0xfd, 0xa2, 0x01]))).toThrow(/i8x16\.relaxed_swizzle/);
    expect(() => relaxWasm(moduleWith(FINAL_MADD))).toThrow(/unexpected SIMD opcode 0x105/);
    expect(() => relaxWasm(moduleWith([0xfd, 0x9a, 0x01]))).toThrow(/unknown SIMD opcode 0x9a/);
    expect(() => relaxWasm(moduleWith([0xfe, 0x04, 0x00]))).toThrow(/unknown atomic instruction 0xfe 0x4/);
    expect(() => relaxWasm(moduleWith([0xfe, 0x4f, 0x02, 0x00]))).toThrow(/unknown atomic instruction 0xfe 0x4f/);
    expect(() => relaxWasm(moduleWith([0xfe, 0x80, 0x01, 0x02, 0x00]))).toThrow(/unknown atomic instruction 0xfe 0x80/);
    expect(() => relaxWasm(moduleWith([0xfe, 0x90, 0x00, 0x02, 0x00]))).toThrow(/non-minimal atomic opcode encoding 0x10/);
    expect(() => relaxWasm(moduleWith([0xfe, 0x03, 0x01]))).toThrow(/atomic\.fence: reserved byte/);
    expect(() => relaxWasm(moduleWith([0xfd, 0xaf, 0x81, 0x00]))).toThrow(/non-minimal/);
    const cut = moduleWith(PROTO_FMA);
    expect(() => relaxWasm(cut.subarray(0, cut.length - 1))).toThrow(/runs past the end|unexpected end/);
    expect(() => relaxWasm(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).toThrow(/not a WebAssembly 1\.0 module/);
  });

  it('the CLI writes the module only when every --same-glue pair is byte-identical (the glue and the worker script)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-relax-'));
    try {
      const file = (name, text) => { const f = join(dir, name); writeFileSync(f, text); return f; };
      const input = file('in.wasm', moduleWith(PROTO_FMA));
      const [glueA, glueB, workerA, workerB, workerC] = [file('a.mjs', 'glue'), file('b.mjs', 'glue'),
        file('a.worker.js', 'worker'), file('b.worker.js', 'worker'), file('c.worker.js', 'worker 2')];
      const run = (out, ...glue) => spawnSync(process.execPath, [fileURLToPath(new URL('../../scripts/relax_wasm.mjs', import.meta.url)),
        input, join(dir, out), '--min-rewrites', '1', ...glue], { encoding: 'utf8' });
      const ok = run('ok.wasm', '--same-glue', glueA, glueB, '--same-glue', workerA, workerB);
      expect(ok.status, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/1 f32x4\.fma -> f32x4\.relaxed_madd.*glue identical to .*b\.mjs, .*b\.worker\.js/);
      expect(scanWasm(readFileSync(join(dir, 'ok.wasm'))).counts).toMatchObject({ relaxedMadd: 1, prototypeFma: 0 });
      const bad = run('bad.wasm', '--same-glue', glueA, glueB, '--same-glue', workerA, workerC);
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toMatch(/a\.worker\.js differs from .*c\.worker\.js/);
      expect(readdirSync(dir).filter((n) => n.startsWith('bad'))).toEqual([]); // nothing written, no temporary
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Each engine ships split (scripts/split_wasm.mjs): <name>.wasm + <name>.deferred.wasm, the
  // relaxed build split by the same list of functions with every FMA in its primary half, so
  // that both builds share one deferred half, <name>.deferred.wasm.
  const scanSplit = (base) => {
    const primary = scanWasm(readFileSync(dist(`${base}.wasm`))).counts;
    const deferred = scanWasm(readFileSync(dist(`${base.replace(/-relaxed$/, '')}.deferred.wasm`))).counts;
    return { primary, deferred, relaxedMadd: primary.relaxedMadd + deferred.relaxedMadd, prototypeFma: primary.prototypeFma + deferred.prototypeFma };
  };

  it('dist/kiln-relaxed{,.deferred}.wasm hold f32x4.relaxed_madd and no prototype; dist/kiln{,.deferred}.wasm neither', () => {
    const relaxed = scanSplit('kiln-relaxed');
    expect(relaxed.prototypeFma).toBe(0);
    // the GEMM micro-kernel alone issues 6 x 2 per k step, unrolled by 4
    expect(relaxed.relaxedMadd).toBeGreaterThanOrEqual(48);
    const simd = scanSplit('kiln');
    expect(simd).toMatchObject({ relaxedMadd: 0, prototypeFma: 0 });
    // same code otherwise, split the same way: as many functions in each primary half, and
    // every FMA in the primary half (the deferred half is shared, so it holds none)
    expect(relaxed.primary.functions).toBe(simd.primary.functions);
    expect(relaxed.primary.relaxedMadd).toBe(relaxed.relaxedMadd);
    for (const base of ['kiln', 'kiln-core', 'kiln-core-inference']) expect(existsSync(dist(`${base}-relaxed.deferred.wasm`)), base).toBe(false);
  });

  it('dist/kiln-mt-relaxed.wasm (the threaded build, not split) holds f32x4.relaxed_madd and no prototype; kiln-mt.wasm neither', () => {
    const relaxed = scanWasm(readFileSync(dist('kiln-mt-relaxed.wasm'))).counts;
    const simd = scanWasm(readFileSync(dist('kiln-mt.wasm'))).counts;
    expect(relaxed.prototypeFma).toBe(0);
    // as many as the full single-thread engine's two halves: the same GEMM and conv kernels
    expect(relaxed.relaxedMadd).toBe(scanSplit('kiln-relaxed').relaxedMadd);
    expect(simd).toMatchObject({ relaxedMadd: 0, prototypeFma: 0 });
    expect(relaxed.functions).toBe(simd.functions);
  });

  it('dist/kiln-core-relaxed.wasm (the core engine) holds the rewritten GEMM kernel; kiln-core.wasm none', () => {
    const relaxed = scanSplit('kiln-core-relaxed');
    expect(relaxed.prototypeFma).toBe(0);
    // the GEMM micro-kernel's 6 x 2 multiply-adds per k step, in the primary module (an MLP
    // runs it); the core engine has no convolution kernels, so fewer than the full engine's
    expect(relaxed.primary.relaxedMadd).toBeGreaterThanOrEqual(12);
    expect(relaxed.relaxedMadd).toBeLessThan(scanSplit('kiln-relaxed').relaxedMadd);
    const simd = scanSplit('kiln-core');
    expect(simd).toMatchObject({ relaxedMadd: 0, prototypeFma: 0 });
    expect(relaxed.primary.functions).toBe(simd.primary.functions);
    // kiln-dl/inference's engine (the core binding TUs without the training ones, no autodiff), split for inference
    const inference = scanSplit('kiln-core-inference-relaxed');
    expect(inference.primary.relaxedMadd).toBeGreaterThanOrEqual(12);
    expect(inference.relaxedMadd).toBe(relaxed.relaxedMadd);
  });
});

describe('init() chooses the relaxed build (select.ts)', () => {
  it('auto: relaxed where validated (either build), SIMD128 elsewhere, with the reason', () => {
    expect(chooseRelaxed({}, 'simd', true)).toEqual({ relaxed: true, reason: expect.stringMatching(/^relaxed SIMD: .*validates f32x4\.relaxed_madd/) });
    expect(chooseRelaxed({ relaxedSimd: 'auto' }, 'simd', false)).toEqual({ relaxed: false, reason: expect.stringMatching(/^SIMD128: .*does not support relaxed SIMD/) });
    // the threaded build has its relaxed variant too (kiln-mt-relaxed.wasm)
    expect(chooseRelaxed({}, 'simd-threads', true)).toEqual({ relaxed: true, reason: expect.stringMatching(/^relaxed SIMD \+ threads: .*validates/) });
    expect(chooseRelaxed({}, 'simd-threads', false)).toEqual({ relaxed: false, reason: expect.stringMatching(/^SIMD128 \+ threads: .*does not support relaxed SIMD/) });
    expect(chooseRelaxed({ relaxedSimd: false }, 'simd-threads', true)).toEqual({ relaxed: false, reason: 'SIMD128 + threads: init({relaxedSimd: false})' });
    expect(chooseRelaxed({ relaxedSimd: false }, 'simd', true)).toEqual({ relaxed: false, reason: 'SIMD128: init({relaxedSimd: false})' });
  });

  it('relaxedSimd: true requires it; a wrong value is a Type error', () => {
    expect(chooseRelaxed({ relaxedSimd: true }, 'simd', true).relaxed).toBe(true);
    const fails = (fn, code, text) => {
      try { fn(); } catch (e) {
        expect(e).toBeInstanceOf(KilnError);
        expect(e.code).toBe(code);
        expect(e.message).toContain(text);
        return;
      }
      throw new Error('did not throw');
    };
    fails(() => chooseRelaxed({ relaxedSimd: true }, 'simd', false), 'Config', 'does not support relaxed SIMD');
    expect(chooseRelaxed({ relaxedSimd: true }, 'simd-threads', true).relaxed).toBe(true);
    fails(() => chooseRelaxed({ relaxedSimd: true }, 'simd-threads', false), 'Config', 'does not support relaxed SIMD');
    fails(() => chooseRelaxed({ relaxedSimd: 'yes' }, 'simd', true), 'Type', `relaxedSimd must be true, false or 'auto', got "yes"`);
  });

  it('detectRelaxedSimd asks WebAssembly.validate with the probe, and survives a missing or throwing one', () => {
    const seen = [];
    expect(detectRelaxedSimd({ WebAssembly: { validate: (b) => { seen.push(b); return true; } } })).toBe(true);
    expect(seen[0]).toBe(RELAXED_SIMD_PROBE);
    expect([...RELAXED_SIMD_PROBE.subarray(-4)]).toEqual([...FINAL_MADD, 0x0b]);
    expect(detectRelaxedSimd({})).toBe(false);
    expect(detectRelaxedSimd({ WebAssembly: { validate: () => { throw new Error('no'); } } })).toBe(false);
    // The probe differs from a valid SIMD128 module only in its instruction.
    expect(RELAXED_SIMD_PROBE).toEqual(moduleWith(FINAL_MADD));
  });
});

/** Node with relaxed SIMD: the flag where this V8 has it (Node 20), else none (later V8 ships it). */
function relaxedNodeArgs() {
  const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
  return options.includes('--experimental-wasm-relaxed-simd') ? ['--experimental-wasm-relaxed-simd'] : [];
}

describe('in Node with relaxed SIMD (child process)', () => {
  const child = fileURLToPath(new URL('./support/relaxed_child.mjs', import.meta.url));
  let summary;
  const run = () => {
    summary ??= JSON.parse(execFileSync(process.execPath, [...relaxedNodeArgs(), child], { encoding: 'utf8', timeout: 120_000 }));
    return summary;
  };

  it('validates the probe, loads kiln-relaxed.wasm by default and says why', { timeout: 180_000 }, () => {
    const s = run();
    expect(s.madd).not.toBeNull();
    expect(s.infos[0]).toMatchObject({ build: 'simd-relaxed', threads: 1, simd: true, buildReason: expect.stringMatching(/^relaxed SIMD/) });
    expect(s.infos[1]).toMatchObject({ build: 'simd', buildReason: 'SIMD128: init({relaxedSimd: false})' });
    expect(s.auto).toBe('simd-relaxed');
  });

  it('f32x4.relaxed_madd(a, b, c) is a·b + c (the prototype meant a + b·c)', () => {
    expect(run().madd.value).toBe(11);
  });

  it('products of several shapes are within γ(k+3)·Σ|a·b| of the double sum on both builds', () => {
    const s = run();
    for (const row of s.gemm) {
      expect(row.relaxed, `relaxed ${row.shape}`).toBeLessThanOrEqual(1);
      expect(row.simd, `simd ${row.shape}`).toBeLessThanOrEqual(1);
    }
    // Where relaxed_madd fuses (x86-64 with FMA3), it rounds differently from mul + add:
    // the builds must then differ somewhere, or the relaxed build would not be using it.
    const differ = s.gemm.reduce((n, row) => n + row.differ, 0);
    if (s.madd.fused) expect(differ).toBeGreaterThan(0);
  });

  it('an MLP SGD step and convolutions (forward, dx, dw) agree with SIMD128 within their bounds', () => {
    const s = run();
    expect(Math.abs(s.mlp.relaxed.before - s.mlp.simd.before)).toBeLessThanOrEqual(1e-6 * Math.abs(s.mlp.simd.before));
    expect(Math.abs(s.mlp.relaxed.after - s.mlp.simd.after)).toBeLessThanOrEqual(1e-5 * Math.abs(s.mlp.simd.after));
    expect(s.mlp.simd.after).toBeLessThan(s.mlp.simd.before);
    expect(s.mlp.worstOutput).toBeLessThanOrEqual(1e-5 * Math.max(1, s.mlp.maxOutput));
    for (const row of s.conv) expect(row.worst, row.name).toBeLessThanOrEqual(1);
    if (s.madd.fused) expect(s.conv.reduce((n, row) => n + row.differ, 0)).toBeGreaterThan(0);
  });
});
