// The WebAssembly build must contain SIMD128 code: xsimd's kernels are compiled for
// SSE4.1, which clang lowers to wasm SIMD (-msimd128). Checked on the disassembly from
// binaryen's wasm-dis (installed with Debian's emscripten).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const wasmPath = fileURLToPath(new URL('../../dist/kiln.wasm', import.meta.url));

describe('dist/kiln.wasm', () => {
  const text = execFileSync('wasm-dis', [wasmPath], {
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
  });

  it.each(['v128.load', 'f32x4.add', 'f32x4.mul'])('contains %s', (instruction) => {
    expect(text).toContain(instruction);
  });
});
