// scripts/split_js.mjs, the split of the JS layer's core chunks (issue 17): on a module written
// here, every function the "profile" did not call and that can move is replaced by a stub and
// runs from the deferred file after its first call, with the same results as the original
// module (computed by it, and by hand); functions whose meaning depends on their place stay; a
// deferred file that cannot be read is KilnError `Io`. (The shipped chunks are split by the
// same code: tests/e2e/size.e2e.mjs checks that the size pages never read their deferred file,
// and every browser suite runs the split chunks.)
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runtime, splitChunk } from '../../scripts/split_js.mjs';

const SOURCE = `
import { KilnError } from './errors.js';
let counter = 0;
export function bump() { counter += 1; return counter; }            // writes a module binding: stays
export function hypot(a, b) { const s = a * a + b * b; return Math.sqrt(s) + 0 * ${'1'.repeat(40)}; }
export class Base { greet(name) { return 'hello ' + name + ' from ' + this.constructor.name + '.'.repeat(1) + ''.padEnd(40, ''); } }
export class Box extends Base {
  #secret = 7;
  constructor(v) { super(); this.v = v; this.values = [v, v * 2, v * 3]; this.label = 'box of ' + String(v).padStart(3, '0'); }
  get double() { return this.v * 2 + 0 * ${'1'.repeat(40)} + this.values.length * 0; }
  set double(x) { this.v = x / 2; this.values = [this.v, this.v * 2, this.v * 3].map((q) => q + 0 * ${'1'.repeat(30)}); }
  sum() { return this.values.reduce((s, q) => s + q, 0) + this.label.length * 0 + 0 * ${'1'.repeat(40)}; }
  secret() { return this.#secret + this.values.length * 0 + this.label.length * 0 + 0 * ${'1'.repeat(40)}; }  // private name: stays
  greet(name) { return super.greet(name).toUpperCase() + ''.padEnd(50, '') + ''.padStart(10, ''); }  // super: stays
  static make(v) { const b = new this(v); b.label = 'made ' + b.label + ''.padEnd(40, '') + ''.padStart(40, ''); return b; }
  *pairs() { for (const q of this.values) yield [q, q * q + 0 * ${'1'.repeat(40)}]; return 'done'; }
  async later(x) { await null; if (x < 0) throw new KilnError('Value', 'later: x must be >= 0, got ' + x + ''.padEnd(30, '')); return x + this.v; }
}
export function makeScaler(factor, offset) {
  const base = factor * 10;
  return {
    scale: (xs) => xs.map((x) => x * factor + offset + base * 0 + 0 * ${'1'.repeat(40)}),
    self() { return this === undefined ? 'none' : typeof this.scale + ''.padEnd(60, '') + ''.padStart(30, ''); },
    arrowThis: function () { const f = () => this.tag + ':' + factor + ''.padEnd(60, ''); return f() + ''.padStart(40, '') + ''.padEnd(40, ''); },
  };
}
export function counterFn() {
  let n = 0;
  return () => { n += 1; return n + 0 * ${'1'.repeat(50)}; };  // writes its parent's binding: stays
}
export const ran = (x) => x + 1 + 0 * ${'1'.repeat(50)};  // the profile "called" it: stays
export const fact = function h(n) { return n ? n * h(n - 1) : 1 + 0 * ${'1'.repeat(50)}; };  // its own name
export const failLater = async (x) => { if (x < 0) throw new KilnError('Value', 'failLater: ' + x + ''.padEnd(40, '')); return x; };
export function tdz(flag) {
  const g = () => (flag ? late : 'ok') + ''.padEnd(60, '') + ''.padStart(10, '');  // reads a const declared after it: stays
  const r = g();
  const late = 1;
  return r;
}
export function args() {
  const g = () => arguments.length + 0 * ${'1'.repeat(60)};  // an arrow's arguments: stays
  return g();
}
`;

const dir = mkdtempSync(join(tmpdir(), 'kiln-split-js-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
copyFileSync(new URL('../../dist/errors.js', import.meta.url), join(dir, 'errors.js'));
copyFileSync(new URL('../../dist/errors.js.map', import.meta.url), join(dir, 'errors.js.map'));
writeFileSync(join(dir, 'original.js'), SOURCE);
// The "profile": only counterFn, makeScaler and ran were called.
const split = splitChunk(SOURCE, (fn) => ['counterFn', 'makeScaler', 'tdz', 'args'].includes(fn.id?.name) || SOURCE.slice(0, fn.start).endsWith('const ran = '), 'split.deferred.txt');
writeFileSync(join(dir, 'split.js'), `${split.code}\n${runtime('split.deferred.txt', split.moduleNames)}\n`);
writeFileSync(join(dir, 'split.deferred.txt'), split.deferred);
const original = await import(pathToFileURL(join(dir, 'original.js')).href);
const splitMod = await import(pathToFileURL(join(dir, 'split.js')).href);

describe('split_js', () => {
  it('moves what can move and keeps what cannot', () => {
    const stubbed = (needle) => {
      const at = split.code.indexOf(needle);
      expect(at, needle).toBeGreaterThanOrEqual(0);
      return /^\([^)]*\)\s*\{return (yield\*)?(\$k\([^)]*\)|\(\$kD\?\?\$kL\(\)\)\[\d+\])\.apply\(this,arguments\)\}/.test(split.code.slice(at + needle.length - 1));
    };
    expect(stubbed('function hypot(')).toBe(true);
    expect(stubbed('get double(')).toBe(true);
    expect(stubbed('set double(')).toBe(true);
    expect(stubbed('sum(')).toBe(true);
    expect(stubbed('static make(')).toBe(true);
    expect(stubbed('*pairs(')).toBe(true);
    expect(stubbed('async later(')).toBe(true);
    expect(stubbed('function makeScaler(')).toBe(false); // called; what it returns moves, with its values
    expect(split.code).toMatch(/scale: \(\.\.\.\$kA\)=>\$k\(\d+,this,\[factor,offset,base\],1\)\(\.\.\.\$kA\)/);
    expect(split.code).toMatch(/self\(\) \{return \(\$kD\?\?\$kL\(\)\)\[\d+\]\.apply\(this,arguments\)\}/);
    expect(split.code).toMatch(/arrowThis: function \(\) \{return \$k\(\d+,this,\[factor\]\)\.apply\(this,arguments\)\}/);
    expect(stubbed('function bump(')).toBe(false); // writes `counter`
    expect(stubbed('secret(')).toBe(false); // #secret
    expect(split.code).toContain('constructor(v) { super();'); // constructors stay
    expect(split.code).toContain('return super.greet(name)'); // super stays
    expect(split.code).toContain('return () => { n += 1;'); // counterFn's arrow writes n
    expect(stubbed('export class Base { greet(')).toBe(true);
    expect(split.code).toContain('const ran = (x) => x + 1'); // called in the profile
    expect(split.code).toContain("const g = () => (flag ? late : 'ok')"); // TDZ
    expect(split.code).toContain('const g = () => arguments.length'); // arguments
    expect(split.code).toMatch(/failLater = async\(\.\.\.\$kA\)=>/);
    expect(split.deferred.startsWith('"use strict";return function(KilnError){return[function(')).toBe(true);
  });

  it('computes what the original module computes', async () => {
    for (const m of [original, splitMod]) {
      expect(m.hypot(3, 4)).toBe(5);
      const b = m.Box.make(2);
      expect(b.double).toBe(4);
      b.double = 10; // v = 5
      expect(b.values).toEqual([5, 10, 15]);
      expect(b.sum()).toBe(30);
      expect(b.secret()).toBe(7);
      expect(b.greet('ann')).toBe('HELLO ANN FROM BOX.');
      expect(b.label).toBe('made box of 002');
      const it = b.pairs();
      expect([...it]).toEqual([[5, 25], [10, 100], [15, 225]]);
      const gen = b.pairs();
      gen.next(); gen.next(); gen.next();
      expect(gen.next()).toEqual({ value: 'done', done: true });
      await expect(b.later(1)).resolves.toBe(6);
      await expect(b.later(-1)).rejects.toMatchObject({ name: 'KilnError', code: 'Value' });
      const s = m.makeScaler(2, 1);
      expect(s.scale([1, 2, 3])).toEqual([3, 5, 7]);
      expect(m.makeScaler(3, 0).scale([1, 2])).toEqual([3, 6]); // other values: another function
      expect(s.scale([0])).toEqual([1]);
      expect(s.self()).toBe('function');
      expect(s.arrowThis.call({ tag: 't' })).toBe('t:2');
      const c = m.counterFn();
      c();
      expect(c()).toBe(2);
      expect(m.ran(1)).toBe(2);
      expect(m.fact(5)).toBe(120);
      expect(m.tdz(false)).toBe('ok');
      expect(m.args(1, 2, 3)).toBe(3);
      const p = m.failLater(-1);
      expect(p).toBeInstanceOf(Promise);
      await expect(p).rejects.toMatchObject({ code: 'Value' });
      expect(m.bump()).toBe(1);
      expect(m.bump()).toBe(2);
    }
  });

  it('the registered asynchronous loader (kiln.loadDeferred) reads the deferred file ahead of the first call', async () => {
    writeFileSync(join(dir, 'early.js'), `${split.code}\n${runtime('early.deferred.txt', split.moduleNames)}\n`);
    writeFileSync(join(dir, 'early.deferred.txt'), split.deferred);
    const loaders = globalThis[Symbol.for('kiln.deferredJs')];
    const before = loaders?.length ?? 0;
    const early = await import(pathToFileURL(join(dir, 'early.js')).href);
    const mine = globalThis[Symbol.for('kiln.deferredJs')];
    expect(mine.length).toBe(before + 1);
    await mine.at(-1)();
    rmSync(join(dir, 'early.deferred.txt')); // read already: the stubs need it no more
    expect(early.hypot(6, 8)).toBe(10);
    expect(early.makeScaler(3, 0).scale([1])).toEqual([3]);
  });

  it('a deferred file of another split (its tag differs) is refused: KilnError Io, no wrong function runs', async () => {
    writeFileSync(join(dir, 'tagged.js'), `${split.code}\n${runtime('tagged.deferred.txt', split.moduleNames, '/*0123456789abcdef*/')}\n`);
    writeFileSync(join(dir, 'tagged.deferred.txt'), `/*fedcba9876543210*/${split.deferred}`);
    const tagged = await import(pathToFileURL(join(dir, 'tagged.js')).href);
    expect(() => tagged.hypot(3, 4)).toThrow(/not the file this chunk was split with/);
    // an async stub rejects instead of throwing
    await expect(tagged.failLater(1)).rejects.toMatchObject({ name: 'KilnError', code: 'Io' });
  });

  it('a deferred file that cannot be read is KilnError Io naming it', async () => {
    writeFileSync(join(dir, 'broken.js'), `${split.code}\n${runtime('missing.deferred.txt', split.moduleNames)}\n`);
    const broken = await import(pathToFileURL(join(dir, 'broken.js')).href);
    expect(broken.ran(1)).toBe(2); // what stayed works
    let err;
    try {
      broken.hypot(3, 4);
    } catch (e) {
      err = e;
    }
    expect(err?.name).toBe('KilnError');
    expect(err?.code).toBe('Io');
    expect(err?.message).toMatch(/^engine: cannot load missing\.deferred\.txt, the part of the package's JS/);
  });
});
