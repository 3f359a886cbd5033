// The element-wise and reduction ops of ops.def (engine/include/kiln/backend/ops.def), from
// the engine: bindings/op_table.cpp returns every row with its enum value (`opTable()`),
// read once per module instance. OpIds looks the ids up by the C++ name; installOps puts
// the generated methods (rows with a JS method) on Tensor.prototype. Their TypeScript
// declarations are generated from ops.def too (scripts/gen_ops.mjs ->
// generated/ops.ts). Adding a row to ops.def adds the method: nothing here changes.
//
// Per family (the behaviour the hand-written methods had):
//   unary    t.exp()                          raw.tUnary(id, t)
//   binary   t.add(other)                     other a Tensor (raw.tBinary) or a number /
//                                             boolean (raw.tBinaryScalar, scalar on the right)
//   compare  t.equal(other)                   as binary (raw.tCompare / tCompareScalar) -> bool
//            t.equalElem(value)               a number only (`Type` otherwise)
//   reduce   t.sum(dim?)                      whole tensor -> [] (raw.tReduce), or along dim
//            t.sumDim(dim)                    along dim, kept (raw.tReduceDim)
import type { RawOpRow, RawOpTable } from '../raw.js';
import { checkInt, describe, fail, isScalar } from './checks.js';
import { engineOf } from './engine.js';
import type { Tensor } from './tensor.js';

export type OpFamily = keyof RawOpTable;

/** The engine's op ids by family and C++ name (ops.def's `snake` column). */
export class OpIds {
  readonly table: RawOpTable;
  private readonly byName: Record<OpFamily, Map<string, number>>;

  constructor(table: RawOpTable) {
    this.table = table;
    const index = (rows: RawOpRow[]) => new Map(rows.map((r) => [r.name, r.id]));
    this.byName = {
      binary: index(table.binary), unary: index(table.unary), compare: index(table.compare), reduce: index(table.reduce),
    };
  }

  /** The id of the row `name` of `family`; `Internal` if the engine has no such row. */
  id(family: OpFamily, name: string): number {
    const id = this.byName[family].get(name);
    if (id === undefined) throw fail('Internal', `opTable: the engine has no ${family} op "${name}"`);
    return id;
  }
}

type Method = (this: Tensor, ...args: unknown[]) => Tensor;

function define(proto: object, name: string, f: Method): void {
  Object.defineProperty(proto, name, { value: f, writable: true, configurable: true, enumerable: false });
}

/** `t.add(other)`: other a Tensor or a scalar (as the right operand). */
export function binary(self: Tensor, id: number, name: string, other: unknown): Tensor {
  const e = engineOf(self, name);
  const a = e.unwrap(self, name);
  if (isScalar(other)) return e.wrap(e.raw.tBinaryScalar(id, a, Number(other), false));
  return e.wrap(e.raw.tBinary(id, a, e.unwrap(other, name, 'other')));
}

/** `t.equal(other)`: other a Tensor or a scalar. */
export function compare(self: Tensor, id: number, name: string, other: unknown): Tensor {
  const e = engineOf(self, name);
  const a = e.unwrap(self, name);
  if (isScalar(other)) return e.wrap(e.raw.tCompareScalar(id, a, Number(other)));
  return e.wrap(e.raw.tCompare(id, a, e.unwrap(other, name, 'other')));
}

/** `t.equalElem(value)`: a number only. */
export function compareElem(self: Tensor, id: number, name: string, other: unknown): Tensor {
  const e = engineOf(self, name);
  const a = e.unwrap(self, name);
  if (!isScalar(other)) throw fail('Type', `${name}: the value must be a number, got ${describe(other)}`);
  return e.wrap(e.raw.tCompareScalar(id, a, Number(other)));
}

export function unary(self: Tensor, id: number, name: string): Tensor {
  const e = engineOf(self, name);
  return e.wrap(e.raw.tUnary(id, e.unwrap(self, name)));
}

/** `t.sum(dim?)`: the whole tensor ([1], as Burn), or along dim (kept). */
export function reduceAll(self: Tensor, id: number, name: string, dim: unknown): Tensor {
  const e = engineOf(self, name);
  const a = e.unwrap(self, name);
  if (dim !== undefined) return e.wrap(e.raw.tReduceDim(id, a, checkInt(dim, name, 'dim')));
  return e.wrap(e.raw.tReduce(id, a));
}

/** `t.sumDim(dim)`: along dim (kept). */
export function reduceDim(self: Tensor, id: number, name: string, dim: unknown): Tensor {
  const e = engineOf(self, name);
  const a = e.unwrap(self, name);
  return e.wrap(e.raw.tReduceDim(id, a, checkInt(dim, name, 'dim')));
}

/** The methods of a family generated for one row: [method name, implementation]. */
export function methodsOf(family: OpFamily, row: RawOpRow): [string, Method][] {
  const m = row.method;
  if (m === null) return [];
  const { id } = row;
  switch (family) {
    case 'unary':
      return [[m, function (this: Tensor) { return unary(this, id, m); }]];
    case 'binary':
      return [[m, function (this: Tensor, other: unknown) { return binary(this, id, m, other); }]];
    case 'compare':
      return [
        [m, function (this: Tensor, other: unknown) { return compare(this, id, m, other); }],
        [`${m}Elem`, function (this: Tensor, v: unknown) { return compareElem(this, id, `${m}Elem`, v); }],
      ];
    case 'reduce':
      return [
        [m, function (this: Tensor, dim: unknown) { return reduceAll(this, id, m, dim); }],
        [`${m}Dim`, function (this: Tensor, dim: unknown) { return reduceDim(this, id, `${m}Dim`, dim); }],
      ];
  }
}

/**
 * Installs the generated methods of every row with a JS method onto `proto` (a per-engine
 * Tensor prototype: the ids are this engine's). Hand-written methods of the same name on the
 * class (none today) win: a generated method never replaces one the prototype chain has.
 */
export function installOps(proto: object, table: RawOpTable): void {
  for (const family of Object.keys(table) as OpFamily[]) {
    for (const row of table[family]) {
      for (const [name, f] of methodsOf(family, row)) {
        if (!(name in proto)) define(proto, name, f);
      }
    }
  }
}
