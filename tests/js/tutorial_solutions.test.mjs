// Every step's exercise Solution works: the step's cells run in Node through the notebook
// runtime with the exercise cell replaced by its Solution (the ```js blocks inside the
// step's `<details><summary>Solution</summary>`), and the exercise cell's output must
// pass the step's expectation (tests/tutorial/expect) and differ from the output of the
// starting code (a Solution that changes nothing the cell prints is not a solution).
//
// A Solution is either a whole replacement of the exercise cell or, when every one of its
// top-level statements declares names the exercise cell declares (the usual "here is the
// finished function"), those declarations replace the exercise's ones in place.
// Step 13 loads what Step 12 stored in IndexedDB, so Step 12's cells run first.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parse } from 'acorn';
import { stepFiles, loadStep, createNotebook, loadExpectations } from './support/notebook_node.mjs';

const TIMEOUT = 10 * 60_000;

/** The code of the ```js blocks inside the file's Solution <details>, joined. */
function solutionOf(markdown) {
  const blocks = [];
  for (const m of markdown.matchAll(/<details><summary>Solution<\/summary>([\s\S]*?)<\/details>/g)) {
    for (const f of m[1].matchAll(/```js\n([\s\S]*?)```/g)) blocks.push(f[1]);
  }
  return blocks.length ? blocks.join('\n') : null;
}

const parseCell = (code) => parse(code, { ecmaVersion: 'latest', sourceType: 'module', allowAwaitOutsideFunction: true });

function declaredNames(node) {
  if (node.type === 'FunctionDeclaration' || node.type === 'ClassDeclaration') return [node.id.name];
  if (node.type === 'VariableDeclaration') return node.declarations.map((d) => d.id.name).filter(Boolean);
  return [];
}

/** The exercise cell's code with the Solution applied (see the file comment). */
function applySolution(exercise, solution) {
  const sol = parseCell(solution).body;
  const byName = new Map();
  for (const node of parseCell(exercise).body) for (const name of declaredNames(node)) byName.set(name, node);
  const replacesDeclarations = sol.every((n) => {
    const names = declaredNames(n);
    return names.length > 0 && names.every((x) => byName.has(x));
  });
  if (!replacesDeclarations) return solution;
  const edits = sol
    .map((n) => ({ target: byName.get(declaredNames(n)[0]), text: solution.slice(n.start, n.end) }))
    .sort((a, b) => b.target.start - a.target.start);
  let code = exercise;
  for (const e of edits) code = code.slice(0, e.target.start) + e.text + code.slice(e.target.end);
  return code;
}

/** Runs a step's cells; the exercise cell runs as `exerciseCode`. Returns its result. */
async function runWithExercise(step, exerciseCode) {
  const nb = await createNotebook();
  let result = null;
  for (const cell of step.cells) {
    const r = await nb.runCell(cell.id, cell.exercise ? exerciseCode : cell.code);
    expect(r.status, `${cell.id}${cell.exercise ? ' (with the Solution)' : ''} ended in an error:\n${r.text}`).toBe('ok');
    if (cell.exercise) result = r;
  }
  return result;
}

const files = stepFiles();

describe('tutorial exercise solutions', () => {
  for (const file of files) {
    const name = basename(file);
    it(`${name}: the Solution passes the expectation and changes the output`, { timeout: TIMEOUT }, async () => {
      const step = loadStep(file);
      const exercise = step.cells.find((c) => c.exercise);
      expect(exercise, `${name} has no exercise cell`).toBeTruthy();
      const solution = solutionOf(readFileSync(file, 'utf8'));
      expect(solution, `${name} has no Solution with a js block`).not.toBeNull();
      if (name.startsWith('13-')) {
        // Step 13 starts from the model and checkpoints Step 12 stored in IndexedDB.
        const twelve = files.find((f) => basename(f).startsWith('12-'));
        const nb = await createNotebook();
        for (const cell of loadStep(twelve).cells) await nb.runCell(cell.id, cell.code);
      }
      const expectations = await loadExpectations(file);
      const starter = await runWithExercise(step, exercise.code);
      const solved = await runWithExercise(step, applySolution(exercise.code, solution));
      await expectations[exercise.id](solved.text);
      expect(solved.text, `${exercise.id}: the Solution prints what the starting code prints`).not.toBe(starter.text);
    });
  }
});
