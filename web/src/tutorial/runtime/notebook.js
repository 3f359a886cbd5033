// The notebook (DOM-free): one scope shared by the cells, the globals a cell sees, and
// running a cell into a list of output events. The page's worker and the Node runner
// (tests/js/support/notebook_node.mjs) both drive this class.
//
// Output events (plain objects, postMessage-safe), in the order a cell makes them:
//   {type: 'text', text, level: 'log'|'info'|'warn'|'error'}   print / console.*
//   {type: 'value', text}                                      the final expression's value
//   {type: 'table', columns, rows}                             show.table
//   {type: 'chart', chart, title, x, series} then {type: 'chart-push', chart, x, values}
//   {type: 'progress', progress, label, total} then
//     {type: 'progress-update', progress, done, note} / {type: 'progress-done', progress}
//   {type: 'link', text, href}                                 show.link
//   {type: 'error', name, code, message, line, column, late?}  the error that ended the cell,
//                                                              or one thrown later by a
//                                                              timer it set (late: true
//                                                              once the cell had finished)
//   {type: 'truncated', count}   the cell printed more than OUTPUT_LIMIT lines: `count`
//                                were dropped (sent again with the new count as more are)
//
// Late output (a timer's print, an error thrown in a timer callback or an unhandled
// rejection) goes to the cell that set the timer, else to the last cell run.
import { compileCell, errorLocation, userMessage } from './evaluator.js';
import { formatLine, formatValue, tableOf, outputText, eventLines } from './format.js';
import { createMnist } from './mnist.js';
import { createAsset, addFile } from './assets.js';

const NO_NAMES = Object.freeze(Object.create(null));

/** The most lines a cell's output keeps (the rest are counted in a `truncated` note). */
export const OUTPUT_LIMIT = 1000;
const COUNTED = new Set(['text', 'value', 'table', 'link']);
const NOTE_EVERY_MS = 200; // how often a growing `truncated` count is sent again
const nativeSetTimeout = globalThis.setTimeout.bind(globalThis);
const nativeClearTimeout = globalThis.clearTimeout.bind(globalThis);
const nativeSetInterval = globalThis.setInterval.bind(globalThis);
const nativeClearInterval = globalThis.clearInterval.bind(globalThis);

/**
 * The error event of a thrown value (a KilnError keeps its code; line from the stack).
 * @param {unknown} e
 * @param {string} sourceName the cell's `cell-<id>.js`
 */
export function errorEvent(e, sourceName) {
  const loc = errorLocation(e, sourceName);
  const isError = e !== null && typeof e === 'object' && 'message' in e;
  const name = isError ? String(e.name ?? 'Error') : 'Error';
  const message = isError ? userMessage(e.message) : `uncaught ${formatValue(e, true)}`;
  const ev = { type: 'error', name, code: isError && e.code !== undefined ? String(e.code) : null, message, line: loc?.line ?? null, column: loc?.column ?? null };
  // The usual cause in a notebook: a cell run before the cells that declare its names.
  if (name === 'ReferenceError' && / is not defined$/.test(message)) ev.hint = NOT_DEFINED_HINT;
  return ev;
}

/** The hint under a ReferenceError "x is not defined". */
export const NOT_DEFINED_HINT = "If a cell above declares it, run the step's cells from the top first (or Run all).";

/**
 * A notebook: cells run in order in one scope (see evaluator.js).
 */
export class Notebook {
  /**
   * @param {object} env
   * @param {object} env.kiln the engine instance (`await init({threads: false})`)
   * @param {(file: string) => Promise<Uint8Array>} env.fetchMnist reads an MNIST IDX file
   * @param {(name: string) => Promise<Uint8Array>} [env.fetchAsset] reads a file of the
   *   tutorial's assets (web/tutorial/assets/) for `asset(name)`
   * @param {Map<string, Uint8Array>} [env.files] the reader's files (the `files` global;
   *   addFile adds to it)
   * @param {object} [env.globals] more names for the scope
   */
  constructor({ kiln, fetchMnist, fetchAsset, files = new Map(), globals = {} }) {
    this.kiln = kiln;
    this.files = files;
    this.current = null; // the cell running (or last run): see runCell
    this.target = null; // the cell whose timer callback is running (late output goes there)
    this.constNames = new Set(); // notebook names declared `const`
    this.timers = new Map(); // cell id -> handles of its pending timers (clearTimers)
    // A prototype with no names (not null: V8 keeps a null-prototype object's properties in
    // a slower dictionary, and cells read notebook names in their loops).
    this.scope = Object.create(NO_NAMES);
    let charts = 0;
    let bars = 0;
    const emit = (ev) => this.emit(ev);
    const log = (level) => (...values) => emit({ type: 'text', text: formatLine(values), level });
    const show = {
      /** A table: array of objects -> columns; object -> key/value rows. */
      table: (data) => emit({ type: 'table', ...tableOf(data) }),
      /** A live line chart; `push(x, {series: value})` adds a point. */
      chart: ({ title = '', x = 'x', series = [] } = {}) => {
        const chart = ++charts;
        emit({ type: 'chart', chart, title: String(title), x: String(x), series: series.map(String) });
        return {
          push: (xv, values = {}) => {
            const clean = {};
            for (const [k, v] of Object.entries(values)) clean[k] = Number(v);
            emit({ type: 'chart-push', chart, x: Number(xv), values: clean });
          },
        };
      },
      /** A progress bar; `update(done, note?)`, `done()`. */
      progress: ({ label = '', total = 1 } = {}) => {
        const progress = ++bars;
        emit({ type: 'progress', progress, label: String(label), total: Number(total) });
        return {
          update: (done, note) => emit({ type: 'progress-update', progress, done: Number(done), note: note === undefined ? null : String(note) }),
          done: () => emit({ type: 'progress-done', progress }),
        };
      },
      /** A link; `href` relative to the tutorial page (e.g. `../#data=mnist`). */
      link: (text, href) => emit({ type: 'link', text: String(text), href: String(href) }),
    };
    Object.assign(this.scope, {
      kiln,
      print: log('log'),
      console: { log: log('log'), info: log('info'), debug: log('log'), warn: log('warn'), error: log('error') },
      show,
      mnist: createMnist(fetchMnist),
      // the files the reader dropped on the page or added (name -> Uint8Array)
      files,
      asset: createAsset(fetchAsset),
      sleep: (ms) => new Promise((resolve) => nativeSetTimeout(resolve, ms)),
      // Timers remember the cell that set them: what their callback prints or throws is
      // shown under that cell, even after it finished.
      // Re-running a cell, or resetting it, stops the timers its earlier run left behind.
      setTimeout: this.timer(nativeSetTimeout, false),
      setInterval: this.timer(nativeSetInterval, true),
      clearTimeout: (h) => this.forget(h, nativeClearTimeout),
      clearInterval: (h) => this.forget(h, nativeClearInterval),
      ...globals,
    });
  }

  /**
   * Makes a file the reader gave the page visible to cells as `files.get(name)` (a file of
   * the same name added before is replaced).
   * @param {string} name
   * @param {Uint8Array} bytes
   */
  addFile(name, bytes) {
    addFile(this.files, name, bytes);
  }

  /**
   * A timer function whose callback runs with its output going to the cell that set it; the
   * timer is remembered under that cell's id until it fires (a timeout) or is cleared.
   */
  timer(native, repeats) {
    return (fn, ms, ...args) => {
      if (typeof fn !== 'function') return native(fn, ms, ...args);
      const cell = this.current;
      const id = cell?.id;
      let set = this.timers.get(id);
      if (!set) this.timers.set(id, (set = new Set()));
      const handle = native(() => {
        if (!repeats) set.delete(handle);
        this.within(cell, () => fn(...args));
      }, ms);
      set.add(handle);
      return handle;
    };
  }

  /** clearTimeout / clearInterval: the native clear, and the handle forgotten. */
  forget(handle, nativeClear) {
    for (const set of this.timers.values()) set.delete(handle);
    nativeClear(handle);
  }

  /**
   * Stops every timer (timeout or interval) that cell `id`'s runs set and that is still
   * pending. runCell calls it before a cell runs again; the page calls it on Reset.
   * @param {string} id
   * @returns {number} how many timers were stopped
   */
  clearTimers(id) {
    const set = this.timers.get(id);
    if (!set) return 0;
    for (const h of set) nativeClearTimeout(h); // timeouts and intervals share one id space
    this.timers.delete(id);
    return set.size;
  }

  /** Runs `fn` with its output (and a thrown or rejected error) going to `cell`. */
  within(cell, fn) {
    const prev = this.target;
    this.target = cell;
    try {
      const r = fn();
      if (r && typeof r.then === 'function') r.then(undefined, (e) => this.reportError(e, cell));
    } catch (e) {
      this.reportError(e, cell);
    } finally {
      this.target = prev;
    }
  }

  /**
   * Shows an error no cell code caught (a timer callback's, an unhandled rejection) under
   * `cell` (default: the timer's cell, else the last cell run). A cell still running ends
   * with status `error`; a finished one gets the error marked `late`.
   * @param {unknown} e
   * @param {object} [cell]
   */
  reportError(e, cell = this.target ?? this.current) {
    if (!cell) return;
    const ev = { ...errorEvent(e, cell.sourceName), late: cell.done };
    if (!cell.done && !cell.asyncError) cell.asyncError = ev;
    this.emit(ev, cell);
  }

  /**
   * Routes an event to the cell running (late events: to the cell whose timer made them,
   * else to the last cell run). Lines beyond OUTPUT_LIMIT are counted, not kept.
   */
  emit(ev, cell = this.target ?? this.current) {
    if (!cell) return;
    if (COUNTED.has(ev.type)) {
      const n = Math.max(1, eventLines(ev).length);
      if (cell.lines + n > OUTPUT_LIMIT) {
        this.drop(cell, n);
        return;
      }
      cell.lines += n;
    }
    cell.events.push(ev);
    cell.onEvent?.(ev, cell.id);
  }

  /** Counts dropped lines in the cell's `truncated` note (sent now, then at most every 200 ms). */
  drop(cell, n) {
    cell.dropped += n;
    if (!cell.note) {
      cell.note = { type: 'truncated', count: cell.dropped };
      cell.events.push(cell.note);
      cell.onEvent?.({ ...cell.note }, cell.id);
      return;
    }
    cell.note.count = cell.dropped;
    if (!cell.noteTimer) cell.noteTimer = nativeSetTimeout(() => this.flushNote(cell), NOTE_EVERY_MS);
  }

  /** Sends the cell's `truncated` note with its latest count. */
  flushNote(cell) {
    if (cell.noteTimer) nativeClearTimeout(cell.noteTimer);
    cell.noteTimer = 0;
    if (cell.note) cell.onEvent?.({ ...cell.note }, cell.id);
  }

  /**
   * Runs one cell in the notebook scope.
   * @param {string} id
   * @param {string} code
   * @param {{onEvent?: (ev: object, id: string) => void}} [opts]
   * @returns {Promise<{id: string, status: 'ok'|'error', events: object[], text: string, error: object | null, ms: number}>}
   */
  async runCell(id, code, { onEvent } = {}) {
    this.clearTimers(id);
    const cur = { id, events: [], onEvent, sourceName: `cell-${id}.js`, lines: 0, dropped: 0, note: null, noteTimer: 0, asyncError: null, done: false };
    this.current = cur;
    const t0 = performance.now();
    let error = null;
    try {
      const cell = compileCell(code, id, this.scope, (name) => this.constNames.has(name));
      cur.sourceName = cell.sourceName;
      for (const name of cell.declared) this.constNames.delete(name);
      for (const name of cell.consts) this.constNames.add(name);
      const value = await cell.run(this.scope);
      if (cell.hasValue && value !== undefined) this.emit({ type: 'value', text: formatValue(value) }, cur);
    } catch (e) {
      error = errorEvent(e, cur.sourceName);
      this.emit(error, cur);
    }
    // an error thrown by a timer the cell set, while the cell ran
    if (!error && cur.asyncError) error = cur.asyncError;
    cur.done = true;
    if (cur.note) this.flushNote(cur);
    return { id, status: error ? 'error' : 'ok', events: cur.events, text: outputText(cur.events), error, ms: performance.now() - t0 };
  }
}
