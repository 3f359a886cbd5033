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
//
// As plain JS: code without semicolons works (a statement the rewrite makes start with `(`
// gets a leading `;`, so it never continues the line before it); writing a `const` (of
// this cell or an earlier one) is a TypeError; a "use strict" cell cannot create a name by
// assigning it; `var`s in top-level blocks and loop heads persist (function-scoped);
// error messages name the reader's identifiers (userMessage), never the scope object.
import { parse } from 'acorn';
import { freeReferences } from './references.js';

/** The name of the scope object inside generated code. */
export const SCOPE = '__kilnScope';
/** The name of the checked-read proxy over the scope (ReferenceError for a missing name). */
export const REFS = '__kilnRefs';
/** The name of the proxy through which a cell writes a `const` (TypeError, as in JS). */
export const CONSTS = '__kilnConst';

/**
 * A message as the reader's code would give it: V8 names the failing expression by its
 * source text, which after the rewrite reads `(0 , __kilnScope.f)` or `__kilnScope.x`.
 * @param {string} message
 * @returns {string}
 */
export function userMessage(message) {
  return String(message)
    .replace(/\(0\s*,\s*__kiln[A-Za-z]+\.([\w$]+)\)/g, '$1')
    .replace(/__kiln[A-Za-z]+\./g, '');
}

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
 * @param {{isNotebookName?: (name: string) => boolean, isGlobal?: (name: string) => boolean,
 *   isConst?: (name: string) => boolean}} [names]
 *   isNotebookName: a name earlier cells (or the runtime) put in the scope; isGlobal: a
 *   name of the JS global object (default: `name in globalThis`); isConst: a notebook
 *   name an earlier cell declared `const` (writing it is a TypeError)
 * @returns {{body: string, declared: string[], consts: string[], hasValue: boolean, strict: boolean}}
 *   body: the rewritten source (same lines as `code`); declared: the top-level names it
 *   declares (`var`s of top-level blocks and loop heads included); consts: those declared
 *   `const`; hasValue: whether the final statement is an expression whose value the body
 *   returns; strict: the cell starts with a "use strict" directive.
 * @throws {CellSyntaxError} when the code does not parse.
 */
export function transformCell(code, { isNotebookName = () => false, isGlobal = (name) => name in globalThis, isConst = () => false } = {}) {
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
  const consts = [];
  const hoisted = [];
  const target = (name) => `${SCOPE}.${name}`;

  // Rewrites a binding pattern into an assignment target on the scope.
  let declaringConst = false;
  const declare = (name) => {
    declared.push(name);
    if (declaringConst) consts.push(name);
  };
  const rewritePattern = (node) => {
    switch (node.type) {
      case 'Identifier':
        declare(node.name);
        insert(node.start, `${SCOPE}.`);
        break;
      case 'ObjectPattern':
        for (const prop of node.properties) {
          if (prop.type === 'RestElement') {
            rewritePattern(prop.argument);
          } else if (prop.shorthand) {
            // `{a}` -> `{a: S.a}`, `{a = 1}` -> `{a: S.a = 1}`
            const name = prop.key.name;
            declare(name);
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

  // A declarator without a value: `let x;` is undefined, `var x;` keeps what x held.
  const noValue = (stmt, d) => insert(d.id.end, stmt.kind === 'var' && d.id.type === 'Identifier' ? ` = ${SCOPE}.${d.id.name}` : ' = undefined');
  // `const a = 1, {b} = o;` -> `<open>S.a = 1, {b: S.b} = o);`
  const rewriteDeclaration = (stmt, open, close = true, loopHead = false) => {
    declaringConst = stmt.kind === 'const';
    replace(stmt.start, stmt.declarations[0].start, open);
    for (const d of stmt.declarations) {
      rewritePattern(d.id);
      if (!d.init && !loopHead) noValue(stmt, d);
    }
    declaringConst = false;
    if (!close) return;
    const last = stmt.declarations[stmt.declarations.length - 1];
    if (code[stmt.end - 1] === ';' && stmt.end - 1 >= last.end) replace(stmt.end - 1, stmt.end, ');');
    else insert(stmt.end, ');');
  };
  // `var`s inside top-level blocks and loop heads are the cell's (function-scoped, as in
  // a script): notebook names too.
  const nestedVar = (s, ctx) => {
    if (!s) return;
    switch (s.type) {
      case 'VariableDeclaration':
        if (s.kind !== 'var') return;
        if (ctx === 'stmt') rewriteDeclaration(s, 'void (');
        else rewriteDeclaration(s, '', false, ctx === 'loop-head'); // `for (var i = 0;` -> `for (S.i = 0;`
        return;
      case 'BlockStatement':
        for (const c of s.body) nestedVar(c, 'stmt');
        return;
      case 'IfStatement':
        nestedVar(s.consequent, 'stmt');
        nestedVar(s.alternate, 'stmt');
        return;
      case 'ForStatement':
        if (s.init?.type === 'VariableDeclaration') nestedVar(s.init, 'head');
        nestedVar(s.body, 'stmt');
        return;
      case 'ForInStatement':
      case 'ForOfStatement':
        if (s.left.type === 'VariableDeclaration') nestedVar(s.left, 'loop-head'); // `for (var x of`
        nestedVar(s.body, 'stmt');
        return;
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'LabeledStatement':
        nestedVar(s.body, 'stmt');
        return;
      case 'TryStatement':
        nestedVar(s.block, 'stmt');
        nestedVar(s.handler?.body, 'stmt');
        nestedVar(s.finalizer, 'stmt');
        return;
      case 'SwitchStatement':
        for (const c of s.cases) for (const x of c.consequent) nestedVar(x, 'stmt');
        return;
      default:
    }
  };

  const body = ast.body;
  // The directive prologue ("use strict") stays first: the hoisting prologue goes after it.
  let directivesEnd = -1;
  for (const stmt of body) {
    if (stmt.type === 'ExpressionStatement' && typeof stmt.directive === 'string') directivesEnd = stmt.end;
    else break;
  }
  const strict = body.some((s) => s.directive === 'use strict' && s.end <= directivesEnd);
  for (const stmt of body) {
    if (stmt.type === 'VariableDeclaration') {
      rewriteDeclaration(stmt, ';(');
    } else if (stmt.type === 'FunctionDeclaration') {
      declared.push(stmt.id.name);
      hoisted.push(stmt.id.name);
    } else if (stmt.type === 'ClassDeclaration') {
      declared.push(stmt.id.name);
      insert(stmt.start, `;${target(stmt.id.name)} = `);
      insert(stmt.end, ';');
    } else {
      nestedVar(stmt, 'stmt');
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
  const ownConst = new Set(consts);
  const constNow = (name) => ownConst.has(name) || (!own.has(name) && isConst(name));
  freeReferences(ast, (id, mode, shorthand) => {
    const name = id.name;
    let prefix;
    if (own.has(name) || isNotebookName(name)) prefix = mode === 'write' && constNow(name) ? CONSTS : SCOPE;
    else if (isGlobal(name)) return;
    // an unknown name: a read throws ReferenceError; a write creates it (sloppy) or throws (strict)
    else prefix = mode === 'read' || mode === 'callee' || (mode === 'write' && strict) ? REFS : SCOPE;
    if (shorthand) insert(shorthand.start, `${name}: `);
    if (mode === 'callee') {
      // `(0, S.f)(...)`: called as a plain function, `this` is not the scope object
      insert(id.start, `(0, ${prefix}.`);
      insert(id.end, ')');
    } else {
      insert(id.start, `${prefix}.`);
    }
  });
  // A statement of a statement list now starting with `(` would continue the line before
  // it when that line has no semicolon (no ASI before `(`): start it with `;`.
  const listStarts = new Set();
  (function lists(node) {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) lists(n);
      return;
    }
    if (typeof node.type !== 'string') return;
    const list = node.type === 'SwitchCase' ? node.consequent : node.type === 'Program' || node.type === 'BlockStatement' || node.type === 'StaticBlock' ? node.body : null;
    if (list) for (const s of list) listStarts.add(s.start);
    for (const key of Object.keys(node)) {
      if (key === 'loc') continue;
      const v = node[key];
      if (v && typeof v === 'object') lists(v);
    }
  })(ast);
  const firstAt = new Map();
  edits.forEach((e, i) => {
    if (!firstAt.has(e.start)) firstAt.set(e.start, i);
  });
  for (const [pos, i] of firstAt) {
    if (listStarts.has(pos) && edits[i].start === edits[i].end && edits[i].text.startsWith('(')) edits[i].text = `;${edits[i].text}`;
  }
  // Function declarations are hoisted inside the cell; publish them before any line runs
  // (after the directives, which must stay first).
  const prologue = hoisted.map((n) => `${target(n)} = ${n};`).join(' ');
  if (prologue && directivesEnd >= 0) insert(directivesEnd, `;${prologue}`);
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
  const head = prologue && directivesEnd < 0 ? `${prologue} ` : '';
  return { body: head + out, declared, consts, hasValue, strict };
}

/** The generated source of a cell: a function of the scope returning the cell's promise. */
function wrap(body, sourceName, async = true) {
  return `(function (${SCOPE}, ${REFS}, ${CONSTS}) { return (${async ? 'async ' : ''}() => { ${body}\n})(); })\n//# sourceURL=${sourceName}`;
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
      set(target, key, value) {
        // a strict cell writing a name nobody declared
        if (!(key in target)) throw new ReferenceError(`${String(key)} is not defined`);
        target[key] = value;
        return true;
      },
    });
    refsOf.set(scope, r);
  }
  return r;
}

const constsOf = new WeakMap(); // scope -> its write-rejecting proxy

/** The proxy through which a cell writes a name declared `const`: a TypeError, as in JS. */
function constRefs(scope) {
  let c = constsOf.get(scope);
  if (!c) {
    c = new Proxy(scope, {
      set() {
        throw new TypeError('Assignment to constant variable.');
      },
    });
    constsOf.set(scope, c);
  }
  return c;
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
 * @param {(name: string) => boolean} [isConst] a notebook name declared `const`
 * @returns {{run: (scope: object) => Promise<unknown>, hasValue: boolean, declared: string[], consts: string[], sourceName: string}}
 * @throws {CellSyntaxError}
 */
export function compileCell(code, id, scope = null, isConst = () => false) {
  const has = Object.prototype.hasOwnProperty;
  const { body, declared, consts, hasValue } = transformCell(code, { isNotebookName: (name) => scope !== null && has.call(scope, name), isConst });
  const sourceName = `cell-${String(id).replace(/[^A-Za-z0-9_-]/g, '_')}.js`;
  let fn;
  try {
    fn = globalEval(wrap(body, sourceName));
  } catch (e) {
    // acorn accepted it but the engine did not (e.g. an early error acorn does not check).
    throw new CellSyntaxError(String(e?.message ?? e), 1, 1);
  }
  return { run: (s) => fn(s, refs(s), constRefs(s)), hasValue, declared, consts, sourceName };
}
