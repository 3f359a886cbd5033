// kiln.io.readSafetensors / readSafetensorsArrays: the round-2 reference case
// `safetensors_load_edge_cases` (tests/native/cases/round2.jsonl, from ../shared/cases:
// scalars, zero-sized tensors, unaligned F32/F16/BF16/I64 data, keys out of offset order,
// __metadata__, a header without tensors) through the engine's reader, exactly (the case's
// tolerance is 0); tests/native/record/round2_safetensors_test.cpp runs it natively. Plus
// files written here by hand from the format, a model's own file, and bad input.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

function round2(id) {
  const text = readFileSync(new URL('../native/cases/round2.jsonl', import.meta.url), 'utf8');
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const c = JSON.parse(line);
    if (c.id === id) return c;
  }
  throw new Error(`no case ${id}`);
}

const CASE = round2('safetensors_load_edge_cases');
const fileBytes = (file) => Uint8Array.from(CASE.inputs[`file_${file}`].data);

// The case's dtypes -> the file's dtype names and the package's tensor dtypes.
const STORED = { float32: 'F32', float16: 'F16', bfloat16: 'BF16', int64: 'I64', int32: 'I32', uint8: 'U8', bool: 'BOOL' };
const TENSOR = { float32: 'float32', float16: 'float32', bfloat16: 'float32', int64: 'int32', int32: 'int32', uint8: 'int32', bool: 'bool' };

/** A SafeTensors file from entries {name: {dtype, shape, bytes}} in the given order, header padded with spaces, data at `pad` bytes in. */
function fileOf(entries, { metadata, headerPad = 0 } = {}) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, e] of Object.entries(entries)) {
    header[name] = { dtype: e.dtype, shape: e.shape, data_offsets: [offset, offset + e.bytes.length] };
    offset += e.bytes.length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header) + ' '.repeat(headerPad));
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const e of Object.values(entries)) {
    out.set(e.bytes, at);
    at += e.bytes.length;
  }
  return out;
}

describe('round-2 case safetensors_load_edge_cases', () => {
  it('every expected tensor except the out-of-int32 I64 loads as a tensor exactly; the I64 one exactly as a BigInt64Array', () => {
    const files = {};
    for (const f of ['valid', 'empty_header', 'only_empty']) files[f] = kiln.io.readSafetensorsArrays(fileBytes(f));
    let checked = 0;
    for (const [key, want] of Object.entries(CASE.expected)) {
      const [file, name] = key.split('/');
      if (name === 'num_tensors') {
        expect(Object.keys(files[file].tensors).length).toBe(want.data[0]);
        checked++;
        continue;
      }
      const got = files[file].tensors[name];
      expect(got, key).toBeDefined();
      expect(got.dtype, key).toBe(STORED[want.dtype]);
      expect(got.shape, key).toEqual(want.shape);
      if (want.dtype === 'int64') {
        expect(got.data).toBeInstanceOf(BigInt64Array);
        expect(Array.from(got.data), key).toEqual(want.data.map((v) => BigInt(v)));
      } else if (want.dtype === 'bool') {
        expect(Array.from(got.data), key).toEqual(want.data.map((v) => (v ? 1 : 0)));
      } else {
        expect(Array.from(got.data), key).toEqual(want.data.map((v) => Math.fround(v)));
      }
      checked++;
    }
    expect(checked).toBe(11);
    expect(files.valid.metadata).toEqual({ format: 'pt', note: 'keys not in offset order' });
    expect(files.empty_header.metadata).toEqual({});
  });

  it('readSafetensors: tensors of the package dtypes (rank 0 for shape [])', () => {
    for (const f of ['empty_header', 'only_empty']) {
      const tensors = kiln.io.readSafetensors(fileBytes(f));
      for (const [key, want] of Object.entries(CASE.expected)) {
        const [file, name] = key.split('/');
        if (file !== f || name === 'num_tensors') continue;
        expect(tensors[name].shape).toEqual(want.shape);
        expect(tensors[name].dtype).toBe(TENSOR[want.dtype]);
        expect(tensors[name].numel).toBe(0);
      }
      expect(Object.keys(tensors).length).toBe(f === 'empty_header' ? 0 : 2);
      kiln.dispose(tensors);
    }
    // file_valid holds I64 -1099511627779, which int32 cannot hold: the whole read fails,
    // naming the tensor and the value, and leaves no tensor behind.
    const before = kiln.memory().tensors;
    expectKilnError(kiln, () => kiln.io.readSafetensors(fileBytes('valid')), 'Value', /^readSafetensors: tensor "i" \(I64\): .*-1099511627779/);
    expect(kiln.memory().tensors).toBe(before);
  });

  it('file_valid without its I64 entry reads every dtype into tensors exactly', () => {
    // The same unaligned layout rebuilt by hand without "i": w starts at data offset 1.
    const f32 = (vals) => new Uint8Array(Float32Array.from(vals).buffer);
    const file = fileOf({
      flag: { dtype: 'U8', shape: [], bytes: Uint8Array.of(7) },
      w: { dtype: 'F32', shape: [2], bytes: f32([0.1, -3.25]) },
      s: { dtype: 'F32', shape: [], bytes: f32([3.5]) },
      h: { dtype: 'F16', shape: [3], bytes: Uint8Array.of(0x00, 0x3e, 0x00, 0xc0, 0x00, 0x04) },
      b: { dtype: 'BOOL', shape: [2], bytes: Uint8Array.of(1, 0) },
      bf: { dtype: 'BF16', shape: [1], bytes: Uint8Array.of(0x20, 0xc0) },
      i: { dtype: 'I64', shape: [1, 1], bytes: new Uint8Array(BigInt64Array.of(-2147483648n).buffer) },
    }, { headerPad: 3 });
    const t = kiln.io.readSafetensors(file);
    const got = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, { shape: v.shape, dtype: v.dtype, data: v.toArray() }]));
    expect(got).toEqual({
      flag: { shape: [], dtype: 'int32', data: 7 },
      w: { shape: [2], dtype: 'float32', data: [Math.fround(0.1), -3.25] },
      s: { shape: [], dtype: 'float32', data: 3.5 },
      h: { shape: [3], dtype: 'float32', data: [1.5, -2, 6.103515625e-5] },
      b: { shape: [2], dtype: 'bool', data: [true, false] },
      bf: { shape: [1], dtype: 'float32', data: [-2.5] },
      i: { shape: [1, 1], dtype: 'int32', data: [[-2147483648]] },
    });
    kiln.dispose(t);
  });
});

describe('models and bad input', () => {
  it("a Sequential's own file reads back as its parameters", () => {
    const model = kiln.nn.sequential([{ type: 'linear', dInput: 3, dOutput: 2 }], { seed: 1 });
    const bytes = model.saveSafetensors();
    const tensors = kiln.io.readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const named = model.namedParameters();
    // A record today; [name, tensor] pairs where namedParameters follows kiln.Module.
    const params = Array.isArray(named) ? named : Object.entries(named);
    expect(Object.keys(tensors).sort()).toEqual(['0.bias', '0.weight']);
    expect(tensors['0.weight'].shape).toEqual([2, 3]);
    expect(params.map(([k]) => k).sort()).toEqual(['0.bias', '0.weight']);
    for (const [k, v] of params) expect(tensors[k].toArray()).toEqual(v.toArray());
    kiln.dispose([tensors, params]);
    model.dispose();
  });

  it('malformed files are Format errors naming the problem; nothing is returned', () => {
    const good = fileBytes('valid');
    expectKilnError(kiln, () => kiln.io.readSafetensors(good.subarray(0, 5)), 'Format', 'read_safetensors: bytes: 5 bytes is too short for the 8-byte header length');
    expectKilnError(kiln, () => kiln.io.readSafetensorsArrays(good.subarray(0, 300)), 'Format', /^read_safetensors: bytes: header length 510 runs past the end/);
    expectKilnError(kiln, () => kiln.io.readSafetensors(good.subarray(0, good.length - 1)), 'Format', /^read_safetensors: bytes: /);
    const f64 = fileOf({ d: { dtype: 'F64', shape: [1], bytes: new Uint8Array(8) } });
    expectKilnError(kiln, () => kiln.io.readSafetensors(f64), 'Format', /^read_safetensors: bytes: "d": .*F64/);
    expectKilnError(kiln, () => kiln.io.readSafetensors([1, 2, 3]), 'Type', 'readSafetensors: bytes must be a Uint8Array or an ArrayBuffer, got an array');
    expectKilnError(kiln, () => kiln.io.readSafetensorsArrays('x'), 'Type', 'readSafetensorsArrays: bytes must be a Uint8Array or an ArrayBuffer, got the string "x"');
    const badBool = fileOf({ b: { dtype: 'BOOL', shape: [1], bytes: Uint8Array.of(2) } });
    expectKilnError(kiln, () => kiln.io.readSafetensors(badBool), 'Value', /^readSafetensors: tensor "b" \(BOOL\): /);
  });
});

describe('saveSafetensorsAsync (the webgpu backend needs it; tests/e2e/webgpu-api.e2e.mjs)', () => {
  it('on the cpu backend resolves to saveSafetensors\'s bytes, for a Sequential and with a dtype', async () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 3, dOutput: 2 }, { type: 'batchNorm', numFeatures: 2 }] }, { seed: 4 });
    const sync = model.saveSafetensors();
    const viaAsync = await model.saveSafetensorsAsync();
    expect(viaAsync).toBeInstanceOf(Uint8Array);
    expect(Array.from(viaAsync)).toEqual(Array.from(sync));
    expect(Array.from(await model.saveSafetensorsAsync({ dtype: 'float16' }))).toEqual(Array.from(model.saveSafetensors({ dtype: 'float16' })));
    // read back: the same keys and values as stateDict
    const entries = kiln.io.readSafetensors(viaAsync);
    const dict = model.stateDict();
    expect(Object.keys(entries).sort()).toEqual(Object.keys(dict).sort());
    for (const [k, t] of Object.entries(dict)) {
      expect(Array.from(entries[k].dataSync())).toEqual(Array.from(t.dataSync()));
      t.dispose();
      entries[k].dispose();
    }
    model.dispose();
  });

  it('rejects a bad dtype as saveSafetensors throws', async () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2, dOutput: 1 }] }, { seed: 1 });
    await expect(model.saveSafetensorsAsync({ dtype: 'int8' })).rejects.toMatchObject({ code: 'Value' });
    model.dispose();
  });
});
