#!/usr/bin/env node
// Generates the TypeScript declarations of the JS Tensor methods that come from the op
// table, engine/include/kiln/backend/ops.def, into bindings/js/generated/ops.ts (not
// committed; scripts/build.sh runs this before tsc). The methods themselves are installed
// at run time from the engine's `opTable()` (bindings/op_table.cpp, bindings/js/tensor/ops.ts);
// this file gives them their types and docs, so a new row with a JS method is a typed,
// documented Tensor method with no JS edit.
//
// Reads the first five arguments of each row, which are fixed (ops.def's header):
//   KILN_<FAMILY>_OP(Name, snake, jsMethod, KINDS, "doc", ...more arguments, ignored)
// A row's jsMethod `_` means the JS layer writes that method by hand: no declaration here.
// Per family (as tensor/ops.ts installs them):
//   UNARY    m(): Tensor
//   BINARY   m(other: Tensor | number): Tensor
//   COMPARE  m(other: Tensor | number): Tensor  and  mElem(value: number): Tensor
//   REDUCE   m(dim?: number): Tensor            and  mDim(dim: number): Tensor
//
// Usage: node scripts/gen_ops.mjs [ops.def] [out.ts]. Writes only when the text changes
// (a no-op build stays a no-op); prints nothing unless it wrote.
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const defPath = process.argv[2] ?? join(root, 'engine/include/kiln/backend/ops.def');
const outPath = process.argv[3] ?? join(root, 'bindings/js/generated/ops.ts');

/** The text without // and /* comments (string literals kept intact). */
function stripComments(text) {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The value of a C string literal (adjacent literals concatenated). */
function cString(arg, where) {
  const parts = arg.trim().match(/^("(?:[^"\\]|\\.)*"\s*)+$/s);
  if (!parts) throw new Error(`${where}: the doc must be a string literal, got ${arg.trim()}`);
  let out = '';
  for (const lit of arg.match(/"(?:[^"\\]|\\.)*"/gs)) {
    out += lit.slice(1, -1).replace(/\\(["\\'?abfnrtv]|x[0-9a-fA-F]+|[0-7]{1,3})/g, (_, e) => {
      const simple = { '"': '"', '\\': '\\', "'": "'", '?': '?', n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v' };
      if (e in simple) return simple[e];
      if (e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16));
      return String.fromCharCode(parseInt(e, 8));
    });
  }
  return out;
}

/** The arguments of the call starting at text[open] === '(' and the index after its ')'. */
function callArgs(text, open, where) {
  const args = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      i = j;
    } else if (c === '(' || c === '[' || c === '{') {
      depth++;
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        args.push(text.slice(start, i));
        return { args, end: i + 1 };
      }
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(start, i));
      start = i + 1;
    }
  }
  throw new Error(`${where}: unbalanced parentheses`);
}

export function parseOpsDef(source, file = 'ops.def') {
  const text = stripComments(source);
  const rows = [];
  const re = /\bKILN_(UNARY|BINARY|COMPARE|REDUCE)_OP\s*\(/g;
  for (let m; (m = re.exec(text)); ) {
    const lineStart = text.lastIndexOf('\n', m.index) + 1;
    if (/^\s*#/.test(text.slice(lineStart, m.index))) continue; // #define / #ifndef / #undef lines
    const line = text.slice(0, m.index).split('\n').length;
    const where = `${file}:${line}`;
    const { args, end } = callArgs(text, m.index + m[0].length - 1, where);
    re.lastIndex = end;
    if (args.length < 5) throw new Error(`${where}: a row needs at least 5 arguments (Name, snake, jsMethod, KINDS, "doc"), got ${args.length}`);
    const [name, snake, method, kinds] = args.slice(0, 4).map((a) => a.trim());
    for (const [what, v] of [['Name', name], ['snake', snake], ['jsMethod', method]]) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) throw new Error(`${where}: ${what} must be an identifier, got ${v}`);
    }
    if (!['FLOAT', 'NUMERIC', 'ANY'].includes(kinds)) throw new Error(`${where}: KINDS must be FLOAT, NUMERIC or ANY, got ${kinds}`);
    rows.push({
      family: m[1].toLowerCase(), name, snake, method: method === '_' ? null : method,
      kinds: kinds.toLowerCase(), doc: cString(args[4], where), line,
    });
  }
  return rows;
}

/** What every reduction shares (the engine's rules, tests/js/tensor_ops.test.mjs). */
const REDUCE_RULES = [
  'Float sums are accurate for any length; int32 sum/prod are exact; mean of no elements is',
  'nan; max/min propagate nan.',
  '@throws KilnError `Limit` for an int32 sum/prod past int32; `Shape` for max/min of no',
  '  elements; `Index` for a dim outside [-rank, rank).',
];

const KINDS = { float: 'float32 only', numeric: 'float32 and int32', any: 'float32, int32 and bool' };

function jsdoc(lines, indent = '  ') {
  const body = lines.flatMap((l) => l.split('\n')).map((l) => (l ? `${indent} * ${l.replace(/\*\//g, '*\\/')}` : `${indent} *`));
  return `${indent}/**\n${body.join('\n')}\n${indent} */`;
}

function sentence(doc) {
  const d = doc.trim();
  return /[.!?)]$/.test(d) && !/\)$/.test(d) ? d : `${d}.`;
}

/** The declarations of one row's methods. */
function declarations(row) {
  const m = row.method;
  const kinds = `Kinds: ${KINDS[row.kinds]}.`;
  const from = `ops.def row \`${row.snake}\` (C++ \`Tensor::${row.snake}\`).`;
  switch (row.family) {
    case 'unary':
      return [
        jsdoc([sentence(row.doc), '', `Element-wise, any shape: \`[...] -> [...]\`. ${kinds}`, from,
          '@throws KilnError `DType` for a kind the op does not support.']),
        `  ${m}(): Tensor;`,
      ];
    case 'binary':
      return [
        jsdoc([sentence(row.doc), '', 'Element-wise; `other` is a tensor of the same dtype or a number. Shapes broadcast',
          `as NumPy: \`[2, 1, 3]\` with \`[4, 1]\` -> \`[2, 4, 3]\`. ${kinds}`, from,
          '@throws KilnError `Shape` if the shapes do not broadcast; `DType` for operands of different',
          '  dtypes or a kind the op does not support.']),
        `  ${m}(other: Tensor | number): Tensor;`,
      ];
    case 'compare':
      return [
        jsdoc([sentence(row.doc), '', '-> bool, the broadcast shape; `other` is a tensor of the same dtype or a number;',
          `nan compares unequal to everything. ${kinds}`, from,
          '@throws KilnError `Shape` if the shapes do not broadcast; `DType` for different dtypes.']),
        `  ${m}(other: Tensor | number): Tensor;`,
        jsdoc([`${sentence(row.doc)} Against a number (Burn's \`${row.snake}_elem\`).`, '',
          `-> bool, this shape. ${kinds}`, '@throws KilnError `Type` unless value is a number.']),
        `  ${m}Elem(value: number): Tensor;`,
      ];
    case 'reduce':
      return [
        jsdoc([sentence(row.doc), '', 'Whole tensor: `[...] -> []` (rank 0, as PyTorch; Burn and Kiln C++ give `[1]`); with `dim`, along it',
          `keeping it with size 1, as \`${m}Dim\`. ${kinds}`, from, ...REDUCE_RULES]),
        `  ${m}(dim?: number): Tensor;`,
        jsdoc([`${sentence(row.doc)} Along \`dim\`, kept with size 1: \`[2, 3] -> [2, 1]\` for dim 1.`, '',
          `${kinds}`, '@throws KilnError `Index` for a dim outside [-rank, rank).']),
        `  ${m}Dim(dim: number): Tensor;`,
      ];
    default:
      throw new Error(`unknown family ${row.family}`);
  }
}

export function generate(rows, defName) {
  const out = [
    '// Generated by scripts/gen_ops.mjs: do not edit (scripts/build.sh regenerates it; not',
    `// committed). From ${defName}:`,
    '// the Tensor methods of the rows that have a JS method; bindings/js/tensor/ops.ts installs',
    '// them from the engine\'s opTable() at init.',
    "import type { Tensor } from '../tensor/tensor.js';",
    '',
    '/** The Tensor methods generated from ops.def (merged into `Tensor`). */',
    'export interface GeneratedTensorOps {',
  ];
  for (const row of rows) if (row.method !== null) out.push(...declarations(row));
  out.push('}', '');
  const byFamily = {};
  for (const row of rows) (byFamily[row.family] ??= []).push(row.method);
  out.push('/** The JS method of each row by family, in ops.def\'s order (null: written by hand). */');
  out.push(`export const OPS_DEF_METHODS = ${JSON.stringify(byFamily)} as const;`, '');
  return out.join('\n');
}

function main() {
  const rows = parseOpsDef(readFileSync(defPath, 'utf8'), relative(root, defPath));
  const text = generate(rows, relative(root, defPath));
  if (existsSync(outPath) && readFileSync(outPath, 'utf8') === text) return;
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(`${outPath}.tmp`, text);
  renameSync(`${outPath}.tmp`, outPath);
  console.log(`[gen_ops] ${relative(root, outPath)}: ${rows.filter((r) => r.method).length} generated methods from ${rows.length} rows`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
