// Every cell of the in-browser tutorial, run in Node through the page's notebook runtime:
// for each step file web/tutorial/content/NN-slug.md, its cells run in order in one fresh
// notebook scope (a step must not depend on an earlier step's names; IndexedDB, from
// fake-indexeddb, is shared by the whole file, so a later step may load what an earlier
// one saved), and each cell's output text must pass its function in
// tests/tutorial/expect/NN-slug.mjs. A cell that ends in an error, or has no expectation,
// fails. KILN_TUTORIAL_CONTENT / KILN_TUTORIAL_EXPECT point this at other directories.
import { describe, it, expect } from 'vitest';
import { basename } from 'node:path';
import { stepFiles, loadStep, loadTutorial, createNotebook, loadExpectations } from './support/notebook_node.mjs';

const files = stepFiles();
const CELL_TIMEOUT = 20 * 60_000; // the MNIST Learner cell trains for minutes in Node

describe('tutorial content', () => {
  it.skipIf(files.length === 0)('parses (titles, unique cell ids, C++ regions present)', () => {
    const steps = loadTutorial();
    expect(steps.map((s) => s.step)).toEqual(steps.map((s, i) => steps[0].step + i));
    for (const s of steps) expect(s.cells.length).toBeGreaterThan(0);
  });
});

for (const file of files) {
  describe(basename(file), () => {
    const step = loadStep(file);
    let notebook;
    let expectations;
    const failed = [];

    it('has an expectation for every cell and no other', async () => {
      expectations = await loadExpectations(file);
      expect(expectations, `missing tests/tutorial/expect/${basename(file, '.md')}.mjs`).toBeTruthy();
      const ids = step.cells.map((c) => c.id);
      expect(Object.keys(expectations).sort()).toEqual([...ids].sort());
    });

    for (const cell of step.cells) {
      it(`cell ${cell.id}`, { timeout: CELL_TIMEOUT }, async () => {
        notebook ??= await createNotebook();
        expectations ??= (await loadExpectations(file)) ?? {};
        const r = await notebook.runCell(cell.id, cell.code);
        if (r.status !== 'ok') failed.push(cell.id);
        expect(r.status, `${cell.id} ended in an error:\n${r.text}`).toBe('ok');
        const check = expectations[cell.id];
        expect(typeof check, `no expectation for ${cell.id}`).toBe('function');
        try {
          await check(r.text);
        } catch (e) {
          throw new Error(`${cell.id}: ${e.message}\n--- output ---\n${r.text}`);
        }
      });
    }
  });
}
