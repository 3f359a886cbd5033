// kiln.io.readNamedMpk / writeNamedMpk: Burn's named MessagePack records through the
// engine's reader and writer (kiln/record/named_mpk.hpp), on the fixtures the native test
// uses (tests/native/record/mpk/, packed by Python's msgpack in Burn's layout with values
// from PyTorch: make_mpk_fixtures.py): the same tensors read, the writer's bytes equal the
// fixtures byte for byte, a model round trips at both precisions, bad input is a KilnError.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

const DIR = new URL('../native/record/mpk/', import.meta.url);
const fixture = (name) => new Uint8Array(readFileSync(new URL(name, DIR)));
const EXPECTED = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const LAYOUT = JSON.parse(readFileSync(new URL('kiln_layout.json', DIR), 'utf8'));
const HOST = { F32: 'float32', F16: 'float32', BF16: 'float32', I32: 'int32', I64: 'int32', U8: 'int32', BOOL: 'bool' };

/** A tensor's values flat (bools as 0/1), for comparing with expected.json. */
function flatValues(t) {
  const data = t.dataSync();
  return Array.from(data, (v) => (typeof v === 'boolean' ? Number(v) : v));
}

describe('records in Burn\'s layout', () => {
  for (const name of ['burn_full.mpk', 'burn_half.mpk']) {
    it(`${name} reads to the values PyTorch gave, by field path`, () => {
      const tensors = kiln.io.readNamedMpk(fixture(name));
      const want = EXPECTED[name].tensors;
      expect(Object.keys(tensors).sort()).toEqual(Object.keys(want).sort());
      for (const [key, w] of Object.entries(want)) {
        const t = tensors[key];
        expect(t.shape, key).toEqual(w.shape);
        expect(t.dtype, key).toBe(HOST[w.dtype]);
        const expected = w.dtype.startsWith('F') ? w.values.map((v) => Math.fround(v)) : w.values;
        expect(flatValues(t), key).toEqual(expected);
      }
      kiln.dispose(tensors);
    });
  }

  it('burn_dtypes.mpk: a 64-bit integer outside int32 fails the whole read, naming the tensor; nothing is left', () => {
    const before = kiln.memory().tensors;
    expectKilnError(kiln, () => kiln.io.readNamedMpk(fixture('burn_dtypes.mpk')), 'Value',
      /^readNamedMpk: tensor "ints\.i64" \(I64\): .*-9223372036854775808/);
    expect(kiln.memory().tensors).toBe(before);
  });

  it('takes an ArrayBuffer too', () => {
    const bytes = fixture('burn_full.mpk');
    const tensors = kiln.io.readNamedMpk(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expect(tensors['steps'].toArray()).toEqual([12345]);
    expect(tensors['mask'].toArray()).toEqual([true, false, true, true]);
    kiln.dispose(tensors);
  });
});

describe('writeNamedMpk', () => {
  /** kiln_layout.json's tensors (F32 -> float32, I64 -> int32, BOOL -> bool). */
  function layoutTensors() {
    const out = {};
    for (const [key, e] of Object.entries(LAYOUT)) {
      const dtype = e.dtype === 'F32' ? 'float32' : e.dtype === 'I64' ? 'int32' : 'bool';
      const data = dtype === 'bool' ? e.values.map((v) => v !== 0) : e.values;
      out[key] = kiln.Tensor.fromData(data, { dtype, shape: e.shape });
    }
    return out;
  }

  it('gives the bytes of Burn\'s layout exactly, at full and half precision, from an object or a Map', () => {
    const tensors = layoutTensors();
    expect(kiln.io.writeNamedMpk(tensors)).toEqual(fixture('kiln_layout_full.mpk'));
    expect(kiln.io.writeNamedMpk(tensors, { precision: 'full' })).toEqual(fixture('kiln_layout_full.mpk'));
    expect(kiln.io.writeNamedMpk(new Map(Object.entries(tensors)), { precision: 'half' })).toEqual(fixture('kiln_layout_half.mpk'));
    kiln.dispose(tensors);
  });

  it('a model round trips: full exactly, half to f16; its state tensors are disposed', () => {
    const model = kiln.nn.sequential([
      { type: 'linear', dInput: 3, dOutput: 4 }, { type: 'relu' }, { type: 'linear', dInput: 4, dOutput: 2 },
    ], { seed: 7 });
    const before = kiln.memory().tensors;
    const full = kiln.io.writeNamedMpk(model);
    const half = kiln.io.writeNamedMpk(model, { precision: 'half' });
    expect(kiln.memory().tensors).toBe(before);
    expect(half.length).toBeLessThan(full.length);
    const x = kiln.Tensor.fromData([[0.5, -1, 2], [3, 0.25, -0.75]]);
    const want = model.forward(x).toArray();
    const params = model.namedParameters();

    const back = kiln.io.readNamedMpk(full);
    expect(Object.keys(back).sort()).toEqual(['0.bias', '0.weight', '2.bias', '2.weight']);
    for (const [k, v] of Object.entries(params)) expect(back[k].toArray(), k).toEqual(v.toArray());
    const other = kiln.nn.sequential([
      { type: 'linear', dInput: 3, dOutput: 4 }, { type: 'relu' }, { type: 'linear', dInput: 4, dOutput: 2 },
    ], { seed: 8 });
    other.loadStateDict(back);
    expect(other.forward(x).toArray()).toEqual(want);

    const halfBack = kiln.io.readNamedMpk(half);
    for (const [k, v] of Object.entries(params)) {
      // f16 rounding: within half a unit in the 11th significant bit.
      const a = v.toArray().flat();
      const b = halfBack[k].toArray().flat();
      a.forEach((value, i) => expect(Math.abs(b[i] - value), k).toBeLessThanOrEqual(Math.abs(value) * 2 ** -11 + 2 ** -25));
    }
    kiln.dispose([back, halfBack, params, x]);
    model.dispose();
    other.dispose();
  });

  it('refuses what Burn\'s layout cannot hold, and bad arguments', () => {
    const a = kiln.Tensor.fromData([1, 2]);
    const big = kiln.Tensor.fromData([5, 40000], { dtype: 'int32' });
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ 'a..b': a }), 'Value', /^write_named_mpk: the key "a\.\.b" has an empty component/);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ fc: a, 'fc.weight': a }), 'Value', /"fc" is a tensor and a module at once \("fc\.weight" lies under it\)/);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ '': a }), 'Value', /a tensor has the empty key/);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ steps: big }, { precision: 'half' }), 'Value', /"steps": Int value 40000 at element 1 does not fit in i16/);
    expect(kiln.io.writeNamedMpk({ steps: big }).length).toBeGreaterThan(0);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ a }, { precision: 'double' }), 'Value', /^writeNamedMpk: precision must be 'full' or 'half', got the string "double"/);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ a }, { dtype: 'float16' }), 'Type', 'writeNamedMpk: unknown option "dtype" (options: precision)');
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ a: [1, 2] }), 'Type', /^writeNamedMpk: "a" must be a kiln Tensor/);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk(new Uint8Array(3)), 'Type', /^writeNamedMpk: source must be/);
    expectKilnError(kiln, () => kiln.io.writeNamedMpk(null), 'Type', /^writeNamedMpk: source must be/);
    const gone = kiln.Tensor.fromData([1]);
    gone.dispose();
    expectKilnError(kiln, () => kiln.io.writeNamedMpk({ w: gone }), 'Disposed', /^writeNamedMpk: the tensor "w" was disposed/);
    kiln.dispose([a, big]);
  });
});

describe('malformed records', () => {
  it('are Format or Limit errors naming the problem; nothing is returned or left behind', () => {
    const good = fixture('burn_full.mpk');
    const before = kiln.memory().tensors;
    expectKilnError(kiln, () => kiln.io.readNamedMpk(good.subarray(0, 500)), 'Format', /^read_named_mpk: bytes: truncated: the 500 bytes end inside a value/);
    expectKilnError(kiln, () => kiln.io.readNamedMpk(new Uint8Array(0)), 'Format', /^read_named_mpk: bytes: empty input/);
    const trailing = new Uint8Array(good.length + 2);
    trailing.set(good);
    expectKilnError(kiln, () => kiln.io.readNamedMpk(trailing), 'Format', `read_named_mpk: bytes: 2 bytes follow the record (it ends at byte ${good.length})`);
    // An array claiming 2^32 - 1 elements in 5 bytes.
    expectKilnError(kiln, () => kiln.io.readNamedMpk(Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff)), 'Format', /an array declares 4294967295 elements, more than the 5 bytes/);
    const deep = new Uint8Array(5000).fill(0x91);
    expectKilnError(kiln, () => kiln.io.readNamedMpk(deep), 'Limit', /NamedMpkLimits::max_depth/);
    // A size that does not match the shape: find fc1.bias's bin8 length byte (12) and lie.
    const text = Array.from(good, (b) => String.fromCharCode(b)).join('');
    const at = text.indexOf('\xa5bytes\xc4\x0c', text.indexOf('\xa4bias'));
    expect(at).toBeGreaterThan(0);
    const lie = good.slice();
    lie[at + 7] = 8;  // 8 bytes claimed; the 4 after them now misparse or mismatch
    expectKilnError(kiln, () => kiln.io.readNamedMpk(lie), 'Format', /^read_named_mpk: bytes: /);
    expectKilnError(kiln, () => kiln.io.readNamedMpk('x'), 'Type', 'readNamedMpk: bytes must be a Uint8Array or an ArrayBuffer, got the string "x"');
    expect(kiln.memory().tensors).toBe(before);
  });
});

describe('writeNamedMpkAsync (the webgpu backend needs it; tests/e2e/webgpu-api.e2e.mjs)', () => {
  it('on the cpu backend resolves to writeNamedMpk\'s bytes (model, object, Map; half precision)', async () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 3, dOutput: 2 }] }, { seed: 9 });
    const same = async (src, opts) => expect(Array.from(await kiln.io.writeNamedMpkAsync(src, opts))).toEqual(Array.from(kiln.io.writeNamedMpk(src, opts)));
    await same(model);
    await same(model, { precision: 'half' });
    const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
    const b = kiln.Tensor.fromData([5, 6], { dtype: 'int32' });
    await same({ 'fc.weight': a, 'fc.steps': b });
    await same(new Map([['w', a]]));
    // read back: the values written
    const back = kiln.io.readNamedMpk(await kiln.io.writeNamedMpkAsync({ 'fc.weight': a }));
    expect(Array.from(back['fc.weight'].dataSync())).toEqual([1, 2, 3, 4]);
    back['fc.weight'].dispose();
    a.dispose();
    b.dispose();
    model.dispose();
  });

  it('rejects as writeNamedMpk throws', async () => {
    await expect(kiln.io.writeNamedMpkAsync(42)).rejects.toMatchObject({ code: 'Type' });
    const a = kiln.Tensor.fromData([1]);
    await expect(kiln.io.writeNamedMpkAsync({ w: a }, { precision: 'quarter' })).rejects.toMatchObject({ code: 'Value' });
    a.dispose();
  });
});
