// Helpers of the model and training tests (tests/js/nn*.test.mjs, train*.test.mjs).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The PyTorch reference cases (tests/native/cases/cases.jsonl), by id. */
export function loadCases() {
  const text = readFileSync(new URL('../../native/cases/cases.jsonl', import.meta.url), 'utf8');
  const cases = new Map();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const c = JSON.parse(line);
    cases.set(c.id, c);
  }
  return cases;
}

/**
 * SafeTensors bytes of `tensors` ({key: {dtype: 'F32' | 'I64' | 'I32', shape, data}}),
 * written here by hand from the format (https://github.com/huggingface/safetensors):
 * u64 little-endian header length, the JSON header, then the little-endian data.
 */
export function safetensorsBytes(tensors) {
  const header = {};
  const chunks = [];
  let offset = 0;
  for (const [key, t] of Object.entries(tensors)) {
    let bytes;
    if (t.dtype === 'F32') bytes = new Uint8Array(Float32Array.from(t.data).buffer);
    else if (t.dtype === 'I32') bytes = new Uint8Array(Int32Array.from(t.data).buffer);
    else if (t.dtype === 'I64') bytes = new Uint8Array(BigInt64Array.from(t.data.map((v) => BigInt(v))).buffer);
    else throw new Error(`safetensorsBytes: dtype ${t.dtype}`);
    header[key] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    chunks.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  while (json.length % 8 !== 0) json += ' ';
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The header of SafeTensors bytes (keys -> {dtype, shape, data_offsets}). */
/**
 * A 2 -> 3 (relu) -> 1 Sequential with known weights (hand-written SafeTensors):
 * 0.weight [[1, -1], [0, 2], [-1, 1]], 0.bias [0, -1, 0.5], 2.weight [[1, 2, -1]], 2.bias [0.25].
 */
export function knownMlp(kiln) {
  const model = kiln.nn.sequential({
    layers: [
      { type: 'linear', dInput: 2, dOutput: 3 },
      { type: 'relu' },
      { type: 'linear', dInput: 3, dOutput: 1 },
    ],
  });
  model.loadSafetensors(safetensorsBytes({
    '0.weight': { dtype: 'F32', shape: [3, 2], data: [1, -1, 0, 2, -1, 1] },
    '0.bias': { dtype: 'F32', shape: [3], data: [0, -1, 0.5] },
    '2.weight': { dtype: 'F32', shape: [1, 3], data: [1, 2, -1] },
    '2.bias': { dtype: 'F32', shape: [1], data: [0.25] },
  }));
  return model;
}

export function safetensorsHeader(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
}

/** Expects `actual` (array-like) to equal `expected` within abs + rel·|expected|. */
export function expectClose(actual, expected, tol = { abs: 1e-5, rel: 1e-4 }, what = '') {
  const a = Array.from(actual);
  const e = Array.from(expected);
  expect(a.length, `${what}: length`).toBe(e.length);
  for (let i = 0; i < e.length; i++) {
    const bound = tol.abs + tol.rel * Math.abs(e[i]);
    if (Number.isNaN(e[i])) {
      expect(Number.isNaN(a[i]), `${what}[${i}]: expected NaN, got ${a[i]}`).toBe(true);
    } else if (!Number.isFinite(e[i])) {
      expect(a[i], `${what}[${i}]`).toBe(e[i]);
    } else {
      expect(Math.abs(a[i] - e[i]), `${what}[${i}]: ${a[i]} vs ${e[i]} (tolerance ${bound})`).toBeLessThanOrEqual(bound);
    }
  }
}

/** A case tensor ({shape, dtype, data}) as a kiln Tensor (int64 -> int32). */
export function caseTensor(kiln, t) {
  const dtype = t.dtype.startsWith('int') ? 'int32' : t.dtype === 'bool' ? 'bool' : 'float32';
  const data = t.data.map((v) => (v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === 'nan' ? NaN : v));
  return kiln.Tensor.fromData(dtype === 'int32' ? Int32Array.from(data) : Float32Array.from(data), { shape: t.shape, dtype });
}

/** Case data with the JSON spellings of non-finite values turned into numbers. */
export function caseData(t) {
  return t.data.map((v) => (v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === 'nan' ? NaN : v));
}

/** The four XOR corners and labels. */
export const XOR_X = Float32Array.from([0, 0, 0, 1, 1, 0, 1, 1]);
export const XOR_Y = Int32Array.from([0, 1, 1, 0]);
