// kiln.io.save / kiln.io.load in Node: a model's SafeTensors file written atomically (a
// temporary file beside it, then a rename), loaded back into another model, raw bytes both
// ways; failures leave no temporary file and an existing file untouched; and the browser-
// only helpers (IndexedDB, download) say so in Node.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let dir;
beforeAll(async () => {
  kiln = await init();
  dir = mkdtempSync(join(tmpdir(), 'kiln-io-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const spec = [{ type: 'linear', dInput: 3, dOutput: 2 }, { type: 'relu' }, { type: 'linear', dInput: 2, dOutput: 1 }];

describe('save and load files', () => {
  it('a model saved to a file loads into another model: same outputs', async () => {
    const a = kiln.nn.sequential(spec, { seed: 1 });
    const b = kiln.nn.sequential(spec, { seed: 2 });
    const path = join(dir, 'model.safetensors');
    await kiln.io.save(path, a);
    expect(readdirSync(dir)).toEqual(['model.safetensors']);
    expect(new Uint8Array(readFileSync(path))).toEqual(a.saveSafetensors());
    const x = kiln.Tensor.fromData([[1, -2, 0.5]]);
    const ya = a.forward(x);
    const before = b.forward(x);
    expect(before.toArray()).not.toEqual(ya.toArray());
    const result = await kiln.io.load(path, b);
    expect(result).toBe(b); // Sequential.loadSafetensors returns the model
    const yb = b.forward(x);
    expect(yb.toArray()).toEqual(ya.toArray());
    kiln.dispose([x, ya, yb, before]);
    a.dispose();
    b.dispose();
  });

  it('raw bytes both ways; a second save replaces the file', async () => {
    const path = join(dir, 'bytes.bin');
    await kiln.io.save(path, Uint8Array.of(1, 2, 3));
    await kiln.io.save(path, Uint8Array.of(4, 5));
    expect(Array.from(await kiln.io.load(path))).toEqual([4, 5]);
    expect(readdirSync(dir).filter((f) => f.startsWith('bytes.bin'))).toEqual(['bytes.bin']);
  });

  it('options are passed to the model (duck-typed: any saveSafetensors/loadSafetensors)', async () => {
    const calls = [];
    const fake = {
      saveSafetensors: (options) => {
        calls.push(options);
        return Uint8Array.of(9, 8, 7);
      },
      loadSafetensors: (bytes) => ({ loaded: Array.from(bytes) }),
    };
    const path = join(dir, 'fake.safetensors');
    await kiln.io.save(path, fake, { dtype: 'float16' });
    expect(calls).toEqual([{ dtype: 'float16' }]);
    expect(await kiln.io.load(path, fake)).toEqual({ loaded: [9, 8, 7] });
  });

  it('a failed write leaves no temporary file and the old file untouched', async () => {
    const sub = join(dir, 'atomic');
    mkdirSync(sub);
    const path = join(sub, 'm.safetensors');
    writeFileSync(path, Uint8Array.of(1, 1, 1));
    // Renaming onto a directory fails after the temporary file was written.
    const target = join(sub, 'a-directory');
    mkdirSync(target);
    const e = await rejection(kiln.io.save(target, Uint8Array.of(5, 5)));
    expect(e).toBeInstanceOf(kiln.KilnError);
    expect(e.code).toBe('Io');
    expect(e.message).toMatch(new RegExp(`^io\\.save: cannot write "${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}": `));
    expect(e.cause).toBeInstanceOf(Error);
    expect(readdirSync(sub).sort()).toEqual(['a-directory', 'm.safetensors']);
    // A model whose saveSafetensors throws: nothing is written at all.
    const boom = { saveSafetensors: () => { throw new Error('cannot serialise'); } };
    expect((await rejection(kiln.io.save(path, boom))).message).toBe('cannot serialise');
    expect(Array.from(readFileSync(path))).toEqual([1, 1, 1]);
    expect(readdirSync(sub).sort()).toEqual(['a-directory', 'm.safetensors']);
    // A directory that does not exist.
    const missing = await rejection(kiln.io.save(join(sub, 'no', 'such', 'dir.bin'), Uint8Array.of(1)));
    expect(missing.code).toBe('Io');
  });

  it('bad input', async () => {
    expect((await rejection(kiln.io.save('', Uint8Array.of(1)))).message).toBe('io.save: path must be a non-empty string, got the string ""');
    expect((await rejection(kiln.io.save(join(dir, 'x'), { weights: 1 }))).message)
      .toBe('io.save: model must have saveSafetensors() (a Sequential or kiln.Module) or be a Uint8Array, got an object');
    expect((await rejection(kiln.io.save(join(dir, 'x'), { saveSafetensors: () => 'no' }))).message)
      .toBe('io.save: model.saveSafetensors() returned the string "no", expected a Uint8Array');
    expect((await rejection(kiln.io.save(join(dir, 'x'), Uint8Array.of(1), { dtype: 'float16' }))).message)
      .toBe('io.save: options apply to a model, not to bytes');
    const e = await rejection(kiln.io.load(join(dir, 'absent.safetensors')));
    expect(e.code).toBe('Io');
    expect(e.message).toMatch(/^io\.load: cannot read ".*absent\.safetensors": .*ENOENT/);
    expect((await rejection(kiln.io.load(join(dir, 'x'), {}))).message)
      .toBe('io.load: model must have loadSafetensors(bytes) (a Sequential or kiln.Module), got an object');
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });
});

describe('browser-only helpers in Node', () => {
  it('IndexedDB and download say what to use instead', async () => {
    const e = await rejection(kiln.io.saveToIndexedDB('m', Uint8Array.of(1)));
    expect(e.code).toBe('State');
    expect(e.message).toBe('io.saveToIndexedDB: IndexedDB is not available here (in Node use kiln.io.save)');
    expect((await rejection(kiln.io.loadBytesFromIndexedDB('m'))).code).toBe('State');
    expectKilnError(kiln, () => kiln.io.download('m.safetensors', Uint8Array.of(1)), 'State',
      'io.download: downloads need a page with a document (in Node use kiln.io.save(path, model))');
  });
});
