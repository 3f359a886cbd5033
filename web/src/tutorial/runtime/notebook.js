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
//   {type: 'error', name, code, message, line, column}         the error that ended the cell
import { compileCell, errorLocation } from './evaluator.js';
import { formatLine, formatValue, tableOf, outputText } from './format.js';
import { createMnist } from './mnist.js';

const NO_NAMES = Object.freeze(Object.create(null));

/**
 * The error event of a thrown value (a KilnError keeps its code; line from the stack).
 * @param {unknown} e
 * @param {string} sourceName the cell's `cell-<id>.js`
 */
export function errorEvent(e, sourceName) {
  const loc = errorLocation(e, sourceName);
  const isError = e !== null && typeof e === 'object' && 'message' in e;
  return {
    type: 'error',
    name: isError ? String(e.name ?? 'Error') : 'Error',
    code: isError && e.code !== undefined ? String(e.code) : null,
    message: isError ? String(e.message) : `uncaught ${formatValue(e, true)}`,
    line: loc?.line ?? null,
    column: loc?.column ?? null,
  };
}

/**
 * A notebook: cells run in order in one scope (see evaluator.js).
 */
export class Notebook {
  /**
   * @param {object} env
   * @param {object} env.kiln the engine instance (`await init({threads: false})`)
   * @param {(file: string) => Promise<Uint8Array>} env.fetchMnist reads an MNIST IDX file
   * @param {object} [env.globals] more names for the scope
   */
  constructor({ kiln, fetchMnist, globals = {} }) {
    this.kiln = kiln;
    this.current = null; // {id, events, onEvent} of the cell running (or last run)
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
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ...globals,
    });
  }

  /** Routes an event to the cell running (late events go to the last cell run). */
  emit(ev) {
    const cur = this.current;
    if (!cur) return;
    cur.events.push(ev);
    cur.onEvent?.(ev, cur.id);
  }

  /**
   * Runs one cell in the notebook scope.
   * @param {string} id
   * @param {string} code
   * @param {{onEvent?: (ev: object, id: string) => void}} [opts]
   * @returns {Promise<{id: string, status: 'ok'|'error', events: object[], text: string, error: object | null, ms: number}>}
   */
  async runCell(id, code, { onEvent } = {}) {
    const cur = { id, events: [], onEvent };
    this.current = cur;
    const t0 = performance.now();
    let error = null;
    let sourceName = `cell-${id}.js`;
    try {
      const cell = compileCell(code, id, this.scope);
      sourceName = cell.sourceName;
      const value = await cell.run(this.scope);
      if (cell.hasValue && value !== undefined) this.emit({ type: 'value', text: formatValue(value) });
    } catch (e) {
      error = errorEvent(e, sourceName);
      this.emit(error);
    }
    return { id, status: error ? 'error' : 'ok', events: cur.events, text: outputText(cur.events), error, ms: performance.now() - t0 };
  }
}
