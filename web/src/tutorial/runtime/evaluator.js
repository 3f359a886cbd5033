// The notebook's cell evaluator (DOM-free: runs in the page's Web Worker and in Node).
//
// A cell is parsed with acorn as a script with top-level `await`. Its top-level
// declarations (`const`/`let`/`var`, destructuring included, `function`, `class`) are
// rewritten in place into assignments on the notebook's scope object, so they persist for
// later cells and a re-run re-declares without "already declared". Every identifier that
// is not bound inside the cell (references.js) and names a notebook name becomes a
// property access on the scope (`S.name`), so a function defined in a cell reads the
// current value (live, as in a notebook) at the speed of a property load; a JS global
// (Math, Float32Array, ...) stays as it is; any other name is read through a proxy that
// throws ReferenceError unless a later cell has defined it. The cell runs in an async arrow
// (top-level await). The value of a final expression statement is returned. Edits never
// add or remove a line break, so an error's line in the generated code is its line in the
// cell; the code is named `cell-<id>.js` (`//# sourceURL`) and the
// line is read from the error's stack, with the line offset calibrated once per engine.
import { parse } from 'acorn';
import { freeReferences } from './references.js';

/** The name of the scope object inside generated code. */
export const SCOPE = '__kilnScope';
/** The name of the checked-read proxy over the scope (ReferenceError for a missing name). */
export const REFS = '__kilnRefs';

/**
 * A cell's code cannot be parsed: a SyntaxError carrying the cell line and column.
 */
export class CellSyntaxError extends SyntaxError {
  /**
   * @param {string} message acorn's message without its "(line:col)" suffix
   * @param {number} line 1-based line in the cell
   * @param {number} column 1-based column in the cell
   */
  constructor(message, line, column) {
    super(message);
    this.name = 'SyntaxError';
    this.line = line;
    this.column = column;
  }
}

/**
 * Rewrites a cell's source for the notebook scope (see the file comment).
 * @param {string} code the cell's source
 * @param {{isNotebookName?: (name: string) => boolean, isGlobal?: (name: string) => boolean}} [names]
 *   isNotebookName: a name earlier cells (or the runtime) put in the scope; isGlobal: a
 *   name of the JS global object (default: `name in globalThis`)
 * @returns {{body: string, declared: string[], hasValue: boolean}} body: the rewritten
 *   source (same lines as `code`); declared: the top-level names it declares; hasValue:
 *   whether the final statement is an expression whose value the body returns.
 * @throws {CellSyntaxError} when the code does not parse.
 */
export function transformCell(code, { isNotebookName = () => false, isGlobal = (name) => name in globalThis } = {}) {
  let ast;
  try {
    ast = parse(code, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: true,
      locations: true,
    });
  } catch (e) {
    const loc = e.loc ?? { line: 1, column: 0 };
    throw new CellSyntaxError(String(e.message).replace(/\s*\(\d+:\d+\)$/, ''), loc.line, loc.column + 1);
  }
  const edits = []; // {start, end, text}; an insert has start === end
  const insert = (pos, text) => edits.push({ start: pos, end: pos, text });
  const replace = (start, end, text) => edits.push({ start, end, text });
  const declared = [];
  const hoisted = [];
  const target = (name) => `${SCOPE}.${name}`;

  // Rewrites a binding pattern into an assignment target on the scope.
  const rewritePattern = (node) => {
    switch (node.type) {
      case 'Identifier':
        declared.push(node.name);
        insert(node.start, `${SCOPE}.`);
        break;
      case 'ObjectPattern':
        for (const prop of node.properties) {
          if (prop.type === 'RestElement') {
            rewritePattern(prop.argument);
          } else if (prop.shorthand) {
            // `{a}` -> `{a: S.a}`, `{a = 1}` -> `{a: S.a = 1}`
            const name = prop.key.name;
            declared.push(name);
            insert(prop.value.start, `${name}: ${SCOPE}.`);
          } else {
            rewritePattern(prop.value);
          }
        }
        break;
      case 'ArrayPattern':
        for (const el of node.elements) if (el) rewritePattern(el);
        break;
      case 'AssignmentPattern':
        rewritePattern(node.left);
        break;
      case 'RestElement':
        rewritePattern(node.argument);
        break;
      default:
        throw new CellSyntaxError(`unsupported declaration pattern ${node.type}`, node.loc.start.line, node.loc.start.column + 1);
    }
  };

  const body = ast.body;
  for (const stmt of body) {
    if (stmt.type === 'VariableDeclaration') {
      // `const a = 1, {b} = o;` -> `;(S.a = 1, {b: S.b} = o);`
      replace(stmt.start, stmt.declarations[0].start, ';(');
      for (const d of stmt.declarations) {
        rewritePattern(d.id);
        if (!d.init) insert(d.id.end, ' = undefined');
      }
      const last = stmt.declarations[stmt.declarations.length - 1];
      if (code[stmt.end - 1] === ';' && stmt.end - 1 >= last.end) replace(stmt.end - 1, stmt.end, ');');
      else insert(stmt.end, ');');
    } else if (stmt.type === 'FunctionDeclaration') {
      declared.push(stmt.id.name);
      hoisted.push(stmt.id.name);
    } else if (stmt.type === 'ClassDeclaration') {
      declared.push(stmt.id.name);
      insert(stmt.start, `;${target(stmt.id.name)} = `);
      insert(stmt.end, ';');
    }
  }
  const lastStmt = body[body.length - 1];
  const hasValue = lastStmt?.type === 'ExpressionStatement';
  if (hasValue) {
    insert(lastStmt.expression.start, 'return (');
    insert(lastStmt.expression.end, ')');
  }
  // Free names: notebook names -> S.name; globals unchanged; unknown reads -> the proxy.
  // (Added after `return (`, which must come first where both insert at one position.)
  const own = new Set(declared);
  freeReferences(ast, (id, mode, shorthand) => {
    const name = id.name;
    let prefix;
    if (own.has(name) || isNotebookName(name)) prefix = SCOPE;
    else if (isGlobal(name)) return;
    else prefix = mode === 'read' || mode === 'callee' ? REFS : SCOPE;
    if (shorthand) insert(shorthand.start, `${name}: `);
    if (mode === 'callee') {
      // `(0, S.f)(...)`: called as a plain function, `this` is not the scope object
      insert(id.start, `(0, ${prefix}.`);
      insert(id.end, ')');
    } else {
      insert(id.start, `${prefix}.`);
    }
  });
  // Function declarations are hoisted inside the cell; publish them before any line runs.
  const prologue = hoisted.map((n) => `${target(n)} = ${n};`).join(' ');
  let out = '';
  let pos = 0;
  edits
    .map((e, i) => ({ ...e, i }))
    .sort((a, b) => a.start - b.start || a.i - b.i)
    .forEach((e) => {
      out += code.slice(pos, e.start) + e.text;
      pos = e.end;
    });
  out += code.slice(pos);
  return { body: (prologue ? prologue + ' ' : '') + out, declared, hasValue };
}

/** The generated source of a cell: a function of the scope returning the cell's promise. */
function wrap(body, sourceName, async = true) {
  return `(function (${SCOPE}, ${REFS}) { return (${async ? 'async ' : ''}() => { ${body}\n})(); })\n//# sourceURL=${sourceName}`;
}

const refsOf = new WeakMap(); // scope -> its checked-read proxy

/** The proxy through which a cell reads a name unknown when it was compiled. */
function refs(scope) {
  let r = refsOf.get(scope);
  if (!r) {
    r = new Proxy(scope, {
      get(target, key) {
        if (key in target) return target[key];
        throw new ReferenceError(`${String(key)} is not defined`);
      },
    });
    refsOf.set(scope, r);
  }
  return r;
}

// Indirect eval: the code sees only the global scope (the notebook scope comes in as S).
const globalEval = eval;

let lineOffset; // generated line - cell line, measured once

/** Measures how the engine numbers the lines of eval'd code named by sourceURL (once). */
export function calibrate() {
  if (lineOffset !== undefined) return lineOffset;
  const fn = globalEval(wrap('\nreturn new Error("calibration");', 'cell-kiln-calibration.js', false));
  const stack = String(fn(Object.create(null), null)?.stack ?? '');
  const m = /cell-kiln-calibration\.js:(\d+)/.exec(stack);
  lineOffset = m ? Number(m[1]) - 2 : 0;
  return lineOffset;
}

/**
 * The cell line (and column) of an error thrown by cell `sourceName`'s code, read from
 * the innermost stack frame in that cell; null if the stack names no such frame.
 * @param {unknown} error
 * @param {string} sourceName e.g. `cell-s01-create.js`
 * @returns {{line: number, column: number | null} | null}
 */
export function errorLocation(error, sourceName) {
  if (error instanceof CellSyntaxError) return { line: error.line, column: error.column };
  const stack = String(error?.stack ?? '');
  const esc = sourceName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${esc}:(\\d+)(?::(\\d+))?`).exec(stack);
  if (!m) return null;
  const line = Number(m[1]) - calibrate();
  // Line 1 carries the wrapper's prefix and the hoisting prologue before the cell's text.
  return { line, column: m[2] !== undefined && line > 1 ? Number(m[2]) : null };
}

/**
 * Compiles a cell into a function of the notebook scope.
 * @param {string} code
 * @param {string} id the cell id (names the code `cell-<id>.js` in stacks)
 * @param {object} [scope] the notebook scope the cell will run in (its names, at compile
 *   time, are the notebook names; a name added later is still found, through the proxy)
 * @returns {{run: (scope: object) => Promise<unknown>, hasValue: boolean, declared: string[], sourceName: string}}
 * @throws {CellSyntaxError}
 */
export function compileCell(code, id, scope = null) {
  const has = Object.prototype.hasOwnProperty;
  const { body, declared, hasValue } = transformCell(code, { isNotebookName: (name) => scope !== null && has.call(scope, name) });
  const sourceName = `cell-${String(id).replace(/[^A-Za-z0-9_-]/g, '_')}.js`;
  let fn;
  try {
    fn = globalEval(wrap(body, sourceName));
  } catch (e) {
    // acorn accepted it but the engine did not (e.g. an early error acorn does not check).
    throw new CellSyntaxError(String(e?.message ?? e), 1, 1);
  }
  return { run: (s) => fn(s, refs(s)), hasValue, declared, sourceName };
}
