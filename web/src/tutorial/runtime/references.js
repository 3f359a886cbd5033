// Static name resolution for a notebook cell (acorn AST): finds every identifier that
// reads or writes a name not bound inside the cell, so the evaluator can point it at the
// notebook scope object (`S.name`) instead of looking it up dynamically (a `with` block
// made a hot loop reading a notebook name ~80x slower).
//
// Bound inside the cell: function parameters, `var`s of nested functions, block-scoped
// declarations of nested blocks, catch parameters, function/class expression names. The
// cell's own top-level declarations and the `var`s of its top-level blocks and loop heads
// are not local: they are notebook names.

/** The names a binding pattern binds. */
export function patternNames(p, out = []) {
  if (!p) return out;
  switch (p.type) {
    case 'Identifier':
      out.push(p.name);
      break;
    case 'ObjectPattern':
      for (const prop of p.properties) patternNames(prop.type === 'RestElement' ? prop.argument : prop.value, out);
      break;
    case 'ArrayPattern':
      for (const el of p.elements) patternNames(el, out);
      break;
    case 'AssignmentPattern':
      patternNames(p.left, out);
      break;
    case 'RestElement':
      patternNames(p.argument, out);
      break;
    default:
      break;
  }
  return out;
}

const isFunction = (n) => n && (n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression');

/** `var` names declared in `node` (not inside nested functions). */
function collectVars(node, out, skipTop = false) {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) collectVars(n, out);
    return;
  }
  if (isFunction(node) || node.type === 'ClassDeclaration' || node.type === 'ClassExpression') return;
  if (node.type === 'VariableDeclaration' && node.kind === 'var' && !skipTop) {
    for (const d of node.declarations) patternNames(d.id, out);
  }
  if (typeof node.type !== 'string' || !/Statement|Declaration|Clause|Program|SwitchCase/.test(node.type)) return;
  for (const key of Object.keys(node)) {
    if (key === 'type' || key === 'loc' || key === 'start' || key === 'end') continue;
    const v = node[key];
    if (v && typeof v === 'object') collectVars(v, out);
  }
}

/** Lexical names (let/const/class/function) declared directly in a statement list. */
function lexicalNames(stmts, out = []) {
  for (const s of stmts) {
    if (s.type === 'VariableDeclaration' && s.kind !== 'var') for (const d of s.declarations) patternNames(d.id, out);
    else if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration') && s.id) out.push(s.id.name);
  }
  return out;
}

class Scope {
  constructor(parent, names) {
    this.parent = parent;
    this.names = new Set(names);
  }

  has(name) {
    for (let s = this; s; s = s.parent) if (s.names.has(name)) return true;
    return false;
  }
}

/**
 * Calls `onFree(identifier, mode, shorthand)` for every identifier of the cell that names
 * something not bound inside the cell. mode: 'read' | 'write' | 'typeof' | 'callee' (a
 * read that is called: `f()`, `` f`...` ``); shorthand: the
 * Property node when the identifier is a shorthand property (`{a}`), else null.
 * The cell's top-level declarations' binding identifiers are not reported (the caller
 * rewrites them); their initialisers are walked.
 * @param {object} program acorn Program
 * @param {(id: object, mode: string, shorthand: object | null) => void} onFree
 */
export function freeReferences(program, onFree) {
  // Every `var` outside functions (top-level, in blocks, in loop heads) is a notebook name:
  // nothing is bound at the top.
  const top = new Scope(null, []);

  const ref = (id, scope, mode, shorthand = null) => {
    if (!scope.has(id.name)) onFree(id, mode, shorthand);
  };

  function bindingPattern(p, scope) {
    // defaults and computed keys of a binding pattern are expressions
    if (!p) return;
    switch (p.type) {
      case 'ObjectPattern':
        for (const prop of p.properties) {
          if (prop.type === 'RestElement') bindingPattern(prop.argument, scope);
          else {
            if (prop.computed) expr(prop.key, scope);
            bindingPattern(prop.value, scope);
          }
        }
        break;
      case 'ArrayPattern':
        for (const el of p.elements) bindingPattern(el, scope);
        break;
      case 'AssignmentPattern':
        bindingPattern(p.left, scope);
        expr(p.right, scope);
        break;
      case 'RestElement':
        bindingPattern(p.argument, scope);
        break;
      default:
        break;
    }
  }

  function assignPattern(p, scope, shorthand = null) {
    if (!p) return;
    switch (p.type) {
      case 'Identifier':
        ref(p, scope, 'write', shorthand);
        break;
      case 'MemberExpression':
        expr(p, scope);
        break;
      case 'ObjectPattern':
        for (const prop of p.properties) {
          if (prop.type === 'RestElement') assignPattern(prop.argument, scope);
          else {
            if (prop.computed) expr(prop.key, scope);
            assignPattern(prop.value, scope, prop.shorthand ? prop : null);
          }
        }
        break;
      case 'ArrayPattern':
        for (const el of p.elements) assignPattern(el, scope);
        break;
      case 'AssignmentPattern':
        assignPattern(p.left, scope, shorthand);
        expr(p.right, scope);
        break;
      case 'RestElement':
        assignPattern(p.argument, scope);
        break;
      default:
        expr(p, scope);
    }
  }

  function fn(node, scope) {
    const names = [];
    for (const p of node.params) patternNames(p, names);
    if (node.type !== 'ArrowFunctionExpression') names.push('arguments');
    if (node.type === 'FunctionExpression' && node.id) names.push(node.id.name);
    if (node.body.type === 'BlockStatement') {
      collectVars(node.body.body, names);
      lexicalNames(node.body.body, names);
    }
    const inner = new Scope(scope, names);
    for (const p of node.params) bindingPattern(p, inner);
    if (node.body.type === 'BlockStatement') statements(node.body.body, inner);
    else expr(node.body, inner);
  }

  function cls(node, scope) {
    if (node.superClass) expr(node.superClass, scope);
    const inner = new Scope(scope, node.id ? [node.id.name] : []);
    for (const m of node.body.body) {
      if (m.type === 'StaticBlock') {
        statements(m.body, new Scope(inner, lexicalNames(m.body)));
        continue;
      }
      if (m.computed) expr(m.key, inner);
      if (m.value) expr(m.value, inner);
    }
  }

  function statements(list, scope) {
    for (const s of list) stmt(s, scope);
  }

  function declaration(decl, scope) {
    for (const d of decl.declarations) {
      bindingPattern(d.id, scope);
      if (d.init) expr(d.init, scope);
    }
  }

  function stmt(s, scope) {
    if (!s) return;
    switch (s.type) {
      case 'VariableDeclaration':
        declaration(s, scope);
        break;
      case 'FunctionDeclaration':
        fn(s, scope);
        break;
      case 'ClassDeclaration':
        cls(s, scope);
        break;
      case 'BlockStatement':
        statements(s.body, new Scope(scope, lexicalNames(s.body)));
        break;
      case 'ForStatement': {
        const inner = s.init?.type === 'VariableDeclaration' && s.init.kind !== 'var' ? new Scope(scope, lexicalNames([s.init])) : scope;
        if (s.init?.type === 'VariableDeclaration') declaration(s.init, inner);
        else if (s.init) expr(s.init, inner);
        if (s.test) expr(s.test, inner);
        if (s.update) expr(s.update, inner);
        stmt(s.body, inner);
        break;
      }
      case 'ForInStatement':
      case 'ForOfStatement': {
        expr(s.right, scope);
        let inner = scope;
        if (s.left.type === 'VariableDeclaration') {
          if (s.left.kind !== 'var') inner = new Scope(scope, lexicalNames([s.left]));
          declaration(s.left, inner);
        } else {
          assignPattern(s.left, scope);
        }
        stmt(s.body, inner);
        break;
      }
      case 'SwitchStatement': {
        expr(s.discriminant, scope);
        const inner = new Scope(scope, lexicalNames(s.cases.flatMap((c) => c.consequent)));
        for (const c of s.cases) {
          if (c.test) expr(c.test, inner);
          statements(c.consequent, inner);
        }
        break;
      }
      case 'TryStatement':
        stmt(s.block, scope);
        if (s.handler) {
          const inner = new Scope(scope, patternNames(s.handler.param));
          bindingPattern(s.handler.param, inner);
          stmt(s.handler.body, inner);
        }
        if (s.finalizer) stmt(s.finalizer, scope);
        break;
      case 'LabeledStatement':
        stmt(s.body, scope);
        break;
      case 'BreakStatement':
      case 'ContinueStatement':
      case 'EmptyStatement':
      case 'DebuggerStatement':
        break;
      case 'ExpressionStatement':
        expr(s.expression, scope);
        break;
      default:
        children(s, scope);
    }
  }

  function children(node, scope) {
    for (const key of Object.keys(node)) {
      if (key === 'type' || key === 'loc' || key === 'start' || key === 'end') continue;
      const v = node[key];
      if (Array.isArray(v)) {
        for (const c of v) if (c && typeof c.type === 'string') visit(c, scope);
      } else if (v && typeof v.type === 'string') visit(v, scope);
    }
  }

  // A child of unknown kind: a statement or an expression.
  function visit(n, scope) {
    if (/Statement$|Declaration$/.test(n.type)) stmt(n, scope);
    else expr(n, scope);
  }

  function expr(e, scope) {
    if (!e) return;
    switch (e.type) {
      case 'Identifier':
        ref(e, scope, 'read');
        break;
      case 'MemberExpression':
        expr(e.object, scope);
        if (e.computed) expr(e.property, scope);
        break;
      case 'ObjectExpression':
        for (const p of e.properties) {
          if (p.type === 'SpreadElement') expr(p.argument, scope);
          else {
            if (p.computed) expr(p.key, scope);
            if (p.shorthand && p.value.type === 'Identifier') ref(p.value, scope, 'read', p);
            else expr(p.value, scope);
          }
        }
        break;
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        fn(e, scope);
        break;
      case 'ClassExpression':
        cls(e, scope);
        break;
      case 'AssignmentExpression':
        if (e.left.type === 'Identifier') ref(e.left, scope, 'write');
        else assignPattern(e.left, scope);
        expr(e.right, scope);
        break;
      case 'CallExpression':
        // a free callee is called without a receiver (not as a method of the scope)
        if (e.callee.type === 'Identifier') ref(e.callee, scope, 'callee');
        else expr(e.callee, scope);
        for (const a of e.arguments) expr(a, scope);
        break;
      case 'TaggedTemplateExpression':
        if (e.tag.type === 'Identifier') ref(e.tag, scope, 'callee');
        else expr(e.tag, scope);
        expr(e.quasi, scope);
        break;
      case 'UpdateExpression':
        if (e.argument.type === 'Identifier') ref(e.argument, scope, 'write');
        else expr(e.argument, scope);
        break;
      case 'UnaryExpression':
        if (e.operator === 'typeof' && e.argument.type === 'Identifier') ref(e.argument, scope, 'typeof');
        else expr(e.argument, scope);
        break;
      case 'MetaProperty':
      case 'Literal':
      case 'ThisExpression':
      case 'Super':
      case 'PrivateIdentifier':
      case 'TemplateElement':
        break;
      default:
        children(e, scope);
    }
  }

  for (const s of program.body) {
    // top-level declarations: their names are notebook names (rewritten by the caller)
    stmt(s, top);
  }
}
