// SafeTensors headers that used to stall or crash the reader, through the WebAssembly build:
// deep nesting (a RangeError from the recursion before), NUL padding (accepted before; the
// reference reader rejects it), repeated keys and more tensors than the cap. Each is a
// KilnError with the reader's message, and the model is left as it was (the native tests
// are tests/native/record/safetensors_test.cpp, SafetensorsBounds.*).
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError as expectKilnErrorOf } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});
const expectKilnError = (...args) => expectKilnErrorOf(kiln, ...args);

/** The 8-byte little-endian length, the header text, then `data` bytes of zeros. */
function file(header, data = 0) {
  const text = typeof header === 'string' ? new TextEncoder().encode(header) : header;
  const out = new Uint8Array(8 + text.length + data);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  return out;
}

describe('SafeTensors header bounds (loadSafetensors)', () => {
  it('rejects bad headers with Format or Limit and keeps the model', () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2, dOutput: 1 }] });
    const before = model.saveSafetensors();
    const bytes = (msg) => new RegExp(`^read(_s|S)afetensors: bytes: .*${msg}`);
    expectKilnError(() => model.loadSafetensors(file(`{"__metadata__":${'['.repeat(100000)}`)),
      'Format', bytes('the header nests arrays and objects more than 8 levels deep'));
    expectKilnError(() => model.loadSafetensors(file('{"a":'.repeat(50000))),
      'Format', bytes('more than 8 levels deep'));
    expectKilnError(() => model.loadSafetensors(file(new Uint8Array([0x7b, 0x7d, 0, 0, 0, 0, 0, 0]))),
      'Format', bytes('the header is padded with NUL bytes from byte 2 of 8; NUL is not JSON whitespace'));
    expectKilnError(() => model.loadSafetensors(file('{"__metadata__":{},"__metadata__":{}}')),
      'Format', bytes('the header repeats the key "__metadata__"'));
    const entries = [];
    for (let i = 0; i <= 100000; ++i) entries.push(`"t${i}":{"dtype":"F32","shape":[1],"data_offsets":[${4 * i},${4 * i + 4}]}`);
    expectKilnError(() => model.loadSafetensors(file(`{${entries.join(',')}}`, 4 * 100001)),
      'Limit', bytes('the header lists more than 100000 tensors, the limit'));
    expect(model.saveSafetensors()).toEqual(before);
    // The instance still works.
    kiln.tidy(() => {
      expect(kiln.Tensor.fromData([1, 2]).add(1).toArray()).toEqual([2, 3]);
    });
    model.dispose();
  });
});
