// How the notebook prints values, and the text of a cell's output (DOM-free).
//
// print(...values): one line, values separated by a space. A string prints as itself; a
// Tensor (anything with its own toString(), e.g. a Module) by its toString(); numbers as
// JS prints them (String(n)); arrays, typed arrays and plain objects as compact JSON-like
// text: `[1, 2, 3]`, `{"loss": 0.5, "shape": [2, 3]}` (valid JSON when the data is: nested
// strings quoted, keys quoted), NaN/Infinity/undefined as JS spells them.
//
// The text of an output (what tests compare, and what the page's [data-output] shows as
// text): one line per printed line / value / link; a table is a header line then one line
// per row, cells separated by " | "; an error is
// `<name> [<code>] at line <n>: <message>` (e.g. `KilnError [Shape] at line 2: matmul: ...`);
// charts and progress bars add no text.

const MAX_ITEMS = 1000; // array items printed before "… (n more)"
const MAX_DEPTH = 6;

const isPlainObject = (v) => {
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
};

/** True for a kiln Tensor (duck-typed: the worker and Node use different module instances). */
export function isTensor(v) {
  return v !== null && typeof v === 'object' && v.constructor?.name === 'Tensor' && Array.isArray(v.shape) && typeof v.toString === 'function';
}

/** Whether `v` has a toString of its own class (not Object's / Array's). */
function ownToString(v) {
  const ts = v.toString;
  return typeof ts === 'function' && ts !== Object.prototype.toString && ts !== Array.prototype.toString && !ArrayBuffer.isView(v);
}

function formatNumber(n) {
  return Object.is(n, -0) ? '-0' : String(n);
}

/**
 * Formats a value as print() shows it (see the file comment).
 * @param {unknown} v
 * @param {boolean} [nested] inside an array/object: strings are quoted
 * @returns {string}
 */
export function formatValue(v, nested = false, depth = 0, seen = new Set()) {
  switch (typeof v) {
    case 'string':
      return nested ? JSON.stringify(v) : v;
    case 'number':
      return formatNumber(v);
    case 'bigint':
      return `${v}n`;
    case 'boolean':
      return String(v);
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return v.toString();
    case 'function':
      return /^class\b/.test(Function.prototype.toString.call(v)) ? `[class ${v.name || '(anonymous)'}]` : `[Function ${v.name || '(anonymous)'}]`;
    default:
      break;
  }
  if (v === null) return 'null';
  if (isTensor(v)) {
    try {
      return v.toString();
    } catch (e) {
      return `Tensor (${e?.message ?? e})`;
    }
  }
  if (v instanceof Error) return `${v.name}${v.code ? ` [${v.code}]` : ''}: ${v.message}`;
  if (seen.has(v)) return '[Circular]';
  if (depth >= MAX_DEPTH) return Array.isArray(v) ? '[…]' : '{…}';
  seen.add(v);
  try {
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      const n = v.length ?? 0;
      const items = [];
      for (let i = 0; i < Math.min(n, MAX_ITEMS); i++) items.push(formatValue(v[i], true, depth + 1, seen));
      if (n > MAX_ITEMS) items.push(`… (${n - MAX_ITEMS} more)`);
      return `[${items.join(', ')}]`;
    }
    if (v instanceof Map) {
      const items = [...v].map(([k, x]) => `${formatValue(k, true, depth + 1, seen)} => ${formatValue(x, true, depth + 1, seen)}`);
      return `Map {${items.join(', ')}}`;
    }
    if (v instanceof Set) return `Set {${[...v].map((x) => formatValue(x, true, depth + 1, seen)).join(', ')}}`;
    if (v instanceof Date) return v.toISOString();
    if (v instanceof Promise) return 'Promise {…}';
    if (!isPlainObject(v) && ownToString(v)) {
      try {
        return String(v);
      } catch {
        // fall through to the fields
      }
    }
    const fields = Object.keys(v).map((k) => `${JSON.stringify(k)}: ${formatValue(v[k], true, depth + 1, seen)}`);
    const body = `{${fields.join(', ')}}`;
    const name = isPlainObject(v) ? '' : v.constructor?.name;
    return name ? `${name} ${body}` : body;
  } finally {
    seen.delete(v);
  }
}

/** One print() line: the values formatted and joined by a space. */
export function formatLine(values) {
  return values.map((v) => formatValue(v)).join(' ');
}

/**
 * A table from `show.table(rows | object)`: an array of objects -> one column per key (in
 * first-seen order); an array of other values -> one `value` column; an object -> `key` and
 * `value` columns. Cells are formatted as print() does.
 * @returns {{columns: string[], rows: string[][]}}
 */
export function tableOf(data) {
  const cell = (x) => formatValue(x);
  if (Array.isArray(data)) {
    const objects = data.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r) && !isTensor(r));
    if (objects && data.length > 0) {
      const columns = [];
      for (const r of data) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
      return { columns, rows: data.map((r) => columns.map((c) => (c in r ? cell(r[c]) : ''))) };
    }
    return { columns: ['value'], rows: data.map((r) => [cell(r)]) };
  }
  if (data instanceof Map) return { columns: ['key', 'value'], rows: [...data].map(([k, v]) => [cell(k), cell(v)]) };
  if (data !== null && typeof data === 'object') {
    return { columns: ['key', 'value'], rows: Object.keys(data).map((k) => [k, cell(data[k])]) };
  }
  return { columns: ['value'], rows: [[cell(data)]] };
}

/** The text of an error event: `<name> [<code>] at line <n>: <message>`. */
export function errorText(e) {
  const code = e.code ? ` [${e.code}]` : '';
  const line = e.line ? ` at line ${e.line}` : '';
  const late = e.late ? ' (after the cell had finished)' : '';
  return `${e.name}${code}${line}${late}: ${e.message}`;
}

/** The note that replaces the lines a cell printed beyond the output limit. */
export function truncatedText(count) {
  return `output truncated: ${count} more line${count === 1 ? '' : 's'}`;
}

/**
 * The text lines of one output event (see the file comment), [] for charts and progress.
 * @param {{type: string}} ev
 * @returns {string[]}
 */
export function eventLines(ev) {
  switch (ev.type) {
    case 'text':
    case 'value':
      return [ev.text];
    case 'link':
      return [ev.text];
    case 'table':
      return [ev.columns.join(' | '), ...ev.rows.map((r) => r.join(' | '))];
    case 'error':
      return ev.hint ? [errorText(ev), ev.hint] : [errorText(ev)];
    case 'truncated':
      return [truncatedText(ev.count)];
    default:
      return [];
  }
}

/** The text of a cell's output: the lines of its events joined by '\n'. */
export function outputText(events) {
  return events.flatMap(eventLines).join('\n');
}
