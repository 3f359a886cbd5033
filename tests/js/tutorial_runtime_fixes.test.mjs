// Tests of the notebook runtime's JavaScript semantics and output rules found wrong by the
// review of issue 16 (/work/wt/BREAKER16.md, defects 1, 3, 4, 11): code without
// semicolons, error messages naming the user's identifiers, `const` reassignment, strict
// mode, `var` in top-level blocks, output after a cell ended (timers) and the per-cell
// output cap. Expected values are what plain JavaScript gives for the same code.
import { describe, it, expect, beforeEach } from 'vitest';
import { createNotebook } from './support/notebook_node.mjs';
import { OUTPUT_LIMIT } from '../../web/src/tutorial/runtime/notebook.js';

let nb;
beforeEach(async () => {
  nb = await createNotebook();
});
const run = (id, code) => nb.runCell(id, code);

describe('code without semicolons (ASI as in plain JS)', () => {
  it('three calls of a notebook name on three lines', async () => {
    const r = await run('a', 'print("a")\nprint("b")\nprint("c")');
    expect(r.error).toBe(null);
    expect(r.text).toBe('a\nb\nc');
  });

  it('declarations, calls of earlier functions and a final value, no semicolons', async () => {
    await run('a', 'function twice(x) { return 2 * x }');
    const code = 'let t = 1\ntwice(t)\nconst u = twice(3)\nprint(u)\nif (u > 1) print("big")\nfor (const k of [1]) twice(k)\ntwice(u)';
    const r = await run('b', code);
    expect(r.error).toBe(null);
    expect(r.text).toBe('6\nbig\n12');
  });

  it('inside function bodies and blocks', async () => {
    const r = await run('a', 'function f() {\n  const x = 1\n  print(x)\n  print(x + 1)\n}\n{\n  f()\n  f()\n}');
    expect(r.text).toBe('1\n2\n1\n2');
  });
});

describe('error messages name the user identifiers', () => {
  it('calling a number', async () => {
    const r = await run('a', 'const num = 3; num()');
    expect(r.error).toMatchObject({ name: 'TypeError', message: 'num is not a function', line: 1 });
  });

  it('no internal name in any message or in the error text', async () => {
    await run('a', 'const obj = 5');
    for (const code of ['obj.f()', 'for (const q of obj) {}', 'obj()', 'new obj()', 'obj.a.b']) {
      const r = await run('b', code);
      expect(r.status).toBe('error');
      expect(r.error.message).not.toMatch(/__kiln/);
      expect(r.text).not.toMatch(/__kiln/);
    }
    expect((await run('c', 'for (const q of obj) {}')).error.message).toBe('obj is not iterable');
  });
});

describe('JS semantics of declarations (defect 11)', () => {
  it('assigning to a const is a TypeError, in the same cell and in a later one', async () => {
    const r = await run('a', 'const cc = 1; cc = 2; cc');
    expect(r.error).toMatchObject({ name: 'TypeError', message: 'Assignment to constant variable.', line: 1 });
    expect((await run('b', 'cc')).text).toBe('1');
    const later = await run('c', 'cc += 5');
    expect(later.error).toMatchObject({ name: 'TypeError', message: 'Assignment to constant variable.' });
    expect((await run('d', 'cc++')).error?.name).toBe('TypeError');
    expect((await run('e', '[cc] = [9]')).error?.name).toBe('TypeError');
    expect((await run('f', 'cc')).text).toBe('1');
    // a later cell may still re-declare it, and then it is what that cell says
    await run('g', 'let cc = 4');
    expect((await run('h', 'cc = 5; cc')).text).toBe('5');
  });

  it('"use strict": assigning an undeclared name is a ReferenceError', async () => {
    const r = await run('a', '"use strict";\nundeclaredAssign = 5');
    expect(r.error).toMatchObject({ name: 'ReferenceError', message: 'undeclaredAssign is not defined', line: 2 });
    expect((await run('b', 'typeof undeclaredAssign')).text).toBe('undefined');
    // sloppy code may still create one (as a sloppy script creates a global)
    await run('c', 'sloppyAssign = 6');
    expect((await run('d', 'sloppyAssign')).text).toBe('6');
  });

  it('"use strict" with function declarations keeps the cell strict', async () => {
    const r = await run('a', '"use strict"\nfunction strictThis() { return this }\nstrictThis()');
    expect(r.error).toBe(null);
    expect(r.events).toEqual([]); // undefined: nothing printed
  });

  it('var in top-level blocks and loop heads persists (var is function-scoped)', async () => {
    await run('a', 'if (true) { var blockVar = 1 }\nfor (var vi = 0; vi < 3; vi++) {}\nfor (var vk of [7, 8]) {}\ntry { var inTry = "t" } catch {}');
    expect((await run('b', '[blockVar, vi, vk, inTry]')).text).toBe('[1, 3, 8, "t"]');
    await run('c', 'if (false) var neverSet = 1');
    expect((await run('d', 'typeof neverSet')).text).toBe('undefined');
  });

  it('var without a value keeps the value it had (as a re-declared var does)', async () => {
    await run('a', 'var kept = 3');
    expect((await run('b', 'var kept; kept')).text).toBe('3');
  });
});

describe('output after a cell ended (defect 3)', () => {
  it('a late print goes under the cell that started the timer', async () => {
    const a = await run('a', 'setTimeout(() => print("late print"), 30)\nprint("now")');
    expect(a.text).toBe('now');
    await run('b', 'await sleep(100)');
    expect(a.events.map((e) => e.text)).toEqual(['now', 'late print']);
  });

  it('an error thrown in a timer callback is shown under the cell that set it', async () => {
    const got = [];
    const a = await nb.runCell('a', 'const t = setTimeout(() => { throw new kiln.KilnError("Value", "late throw") }, 20)', { onEvent: (ev, id) => got.push([id, ev.type, ev.message]) });
    expect(a.status).toBe('ok');
    await run('b', 'await sleep(80)');
    expect(got).toEqual([['a', 'error', 'late throw']]);
    expect(a.events.find((e) => e.type === 'error')).toMatchObject({ code: 'Value', late: true, line: 1 });
  });

  it('an error in a timer while the cell still runs ends the cell with status error', async () => {
    const r = await run('a', 'setTimeout(() => { throw new Error("boom in timer") }, 10)\nawait sleep(60)\nprint("after")');
    expect(r.status).toBe('error');
    expect(r.text).toMatch(/boom in timer/);
  });

  it('reportError (unhandled rejections) goes to the last cell run', async () => {
    await run('a', 'print(1)');
    const b = await run('b', 'print(2)');
    nb.reportError(new Error('unawaited rejection'));
    expect(b.events.at(-1)).toMatchObject({ type: 'error', message: 'unawaited rejection', late: true });
  });

  it('clearTimeout and setInterval work through the notebook', async () => {
    const r = await run('a', 'let n = 0\nconst h = setInterval(() => { n++; if (n === 3) clearInterval(h) }, 5)\nconst t = setTimeout(() => print("never"), 5)\nclearTimeout(t)\nawait sleep(80)\nn');
    expect(r.text).toBe('3');
  });
});

describe('output cap per cell (defect 4)', () => {
  it('prints beyond the limit are dropped, with a note of how many', async () => {
    const r = await run('a', 'for (let i = 0; i < 100000; i++) print("line " + i)');
    const lines = r.text.split('\n');
    expect(lines.length).toBe(OUTPUT_LIMIT + 1);
    expect(lines[0]).toBe('line 0');
    expect(lines[OUTPUT_LIMIT - 1]).toBe(`line ${OUTPUT_LIMIT - 1}`);
    expect(lines[OUTPUT_LIMIT]).toBe(`output truncated: ${100000 - OUTPUT_LIMIT} more lines`);
  });

  it('an error after the cap is still shown', async () => {
    const r = await run('a', `for (let i = 0; i < ${OUTPUT_LIMIT + 5}; i++) print(i)\nnull.x`);
    const lines = r.text.split('\n');
    expect(lines[OUTPUT_LIMIT]).toBe('output truncated: 5 more lines');
    expect(lines.at(-1)).toMatch(/^TypeError at line 2: /);
  });

  it('a cell under the cap has no note', async () => {
    const r = await run('a', 'for (let i = 0; i < 3; i++) print(i)');
    expect(r.text).toBe('0\n1\n2');
  });
});

// Second review of issue 16: a cell's timers outlived it (an interval kept printing after
// the cell was re-run or reset, and Stop was disabled because nothing was running).
describe("a cell's timers end with its next run or its reset", () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const ticks = (events) => events.filter((e) => /^tick /.test(e.text ?? '')).length;

  it('re-running a cell stops the interval its earlier run set', async () => {
    const first = await run('a', 'let n = 0; setInterval(() => print("tick " + n++), 10)');
    await sleep(60);
    expect(ticks(first.events)).toBeGreaterThan(0);
    const second = await run('a', 'print("again")');
    const before = ticks(first.events);
    await sleep(80);
    expect(ticks(first.events)).toBe(before); // the old interval is gone
    expect(second.text).toBe('again');
  });

  it('clearTimers(id) stops pending timeouts and intervals of that cell only', async () => {
    const a = await run('a', 'setInterval(() => print("tick a"), 10); setTimeout(() => print("tick late"), 40)');
    const b = await run('b', 'setInterval(() => print("tick b"), 10)');
    expect(nb.clearTimers('a')).toBe(2);
    const [na, nbTicks] = [ticks(a.events), ticks(b.events)];
    await sleep(80);
    expect(ticks(a.events)).toBe(na);
    expect(ticks(b.events)).toBeGreaterThan(nbTicks); // b's interval still runs
    expect(nb.clearTimers('b')).toBe(1);
    expect(nb.clearTimers('b')).toBe(0);
  });

  it('a timeout that fired or was cleared is not counted again', async () => {
    await run('a', 'setTimeout(() => print("tick 1"), 5); const t = setTimeout(() => print("never"), 1000); clearTimeout(t)');
    await sleep(40);
    expect(nb.clearTimers('a')).toBe(0);
  });
});

// Second review of issue 16: a cell run before the cells that declare its names failed
// with a bare "model is not defined".
describe('a name no cell has declared yet', () => {
  it('keeps JavaScript message and adds a hint line to run the cells above first', async () => {
    const r = await run('a', 'print(1)\nmodel.forward(2)');
    expect(r.error).toMatchObject({ name: 'ReferenceError', message: 'model is not defined', line: 2 });
    expect(r.text).toBe("1\nReferenceError at line 2: model is not defined\nIf a cell above declares it, run the step's cells from the top first (or Run all).");
  });

  it('other errors get no hint', async () => {
    const r = await run('a', 'null.x');
    expect(r.error.name).toBe('TypeError');
    expect(r.error.hint).toBeUndefined();
    expect(r.text.split('\n')).toHaveLength(1);
  });
});

describe("the page session drops late output of a cell's earlier runs", async () => {
  const { NotebookSession } = await import('../../web/src/tutorial/session.js');
  it('after a re-run or a Reset, events in flight from older runs are not shown', async () => {
    const posted = [];
    const worker = { postMessage: (m) => posted.push(m), terminate() {}, onmessage: null };
    const shown = [];
    const session = new NotebookSession(() => worker, { onEvent: (id, ev) => shown.push(`${id}:${ev.text}`) });
    const send = (msg) => worker.onmessage({ data: msg });
    const first = session.run('a', 'x');
    const run1 = posted.at(-1).run;
    send({ type: 'start', run: run1, id: 'a' });
    send({ type: 'done', run: run1, id: 'a', status: 'ok', error: null, ms: 1 });
    await first;
    send({ type: 'event', run: run1, id: 'a', ev: { type: 'text', text: 'late 1' } }); // shown: the cell's latest run
    const second = session.run('a', 'y');
    const run2 = posted.at(-1).run;
    send({ type: 'start', run: run2, id: 'a' });
    send({ type: 'done', run: run2, id: 'a', status: 'ok', error: null, ms: 1 });
    await second;
    send({ type: 'event', run: run1, id: 'a', ev: { type: 'text', text: 'late from run 1' } }); // dropped
    send({ type: 'event', run: run2, id: 'a', ev: { type: 'text', text: 'late 2' } }); // shown
    session.reset('a');
    expect(posted.at(-1)).toEqual({ type: 'reset', id: 'a' });
    send({ type: 'event', run: run2, id: 'a', ev: { type: 'text', text: 'after reset' } }); // dropped
    expect(shown).toEqual(['a:late 1', 'a:late 2']);
  });
});
