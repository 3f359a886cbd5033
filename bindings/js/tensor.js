// kiln-dl's tensor and autodiff API: the JS class `Tensor` over the engine's RawTensor
// handles (bindings/js_tensor.cpp, tensor_*.cpp), `Gradients`, tidy / keep / dispose,
// noGrad, memory(), kiln.activation.*. Types and docs: index.d.ts.
//
// Internal interface for the other parts of the package (nn.js, ...): installTensor()
// returns `internals` = { raw, Tensor, Gradients, wrap(rawTensor) -> Tensor,
// unwrap(tensor, op, what?) -> RawTensor, fail(code, message), checks: {...} }.
import { KilnError } from './errors.js';

const DTYPES = ['float32', 'int32', 'bool'];
const DTYPE_CODE = { float32: 0, int32: 1, bool: 2 };
const BIN = { add: 0, sub: 1, mul: 2, div: 3, divTrunc: 4, rem: 5, fmod: 6, pow: 7, max: 8, min: 9 };
const UN = {
  neg: 0, abs: 1, sign: 2, exp: 3, log: 4, log1p: 5, sqrt: 6, sin: 7, cos: 8, tanh: 9, ceil: 10,
  floor: 11, round: 12, recip: 13, erf: 14, sigmoid: 15, relu: 16, gelu: 17, geluTanh: 18, silu: 19,
};
const CMP = { equal: 0, notEqual: 1, greater: 2, greaterEqual: 3, lower: 4, lowerEqual: 5 };
const RED = { sum: 0, mean: 1, prod: 2, max: 3, min: 4, any: 5, all: 6 };
const TOKEN = Symbol('kiln.Tensor.internal');
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

// ---------------------------------------------------------------- argument checks

function fail(code, message) {
  return new KilnError(code, message);
}

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  switch (typeof v) {
    case 'string': return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
    case 'number': return `the number ${v}`;
    case 'boolean': return `the boolean ${v}`;
    case 'undefined': return 'undefined';
    case 'bigint': return `the bigint ${v}n`;
    case 'function': return 'a function';
    case 'symbol': return 'a symbol';
    default: {
      const name = v.constructor && v.constructor.name;
      return name && name !== 'Object' ? `a ${name}` : 'an object';
    }
  }
}

function checkNumber(v, op, what) {
  if (typeof v !== 'number') throw fail('Type', `${op}: ${what} must be a number, got ${describe(v)}`);
  return v;
}

function checkInt(v, op, what) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw fail('Type', `${op}: ${what} must be an integer, got ${describe(v)}`);
  }
  return v;
}

function checkBool(v, op, what) {
  if (typeof v !== 'boolean') throw fail('Type', `${op}: ${what} must be a boolean, got ${describe(v)}`);
  return v;
}

function checkIntArray(v, op, what) {
  if (!Array.isArray(v)) throw fail('Type', `${op}: ${what} must be an array of integers, got ${describe(v)}`);
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'number' || !Number.isSafeInteger(v[i])) {
      throw fail('Type', `${op}: ${what}[${i}] must be an integer, got ${describe(v[i])}`);
    }
  }
  return v;
}

function checkShape(v, op) {
  if (!Array.isArray(v)) throw fail('Type', `${op}: shape must be an array of integers, got ${describe(v)}`);
  for (let i = 0; i < v.length; i++) {
    const d = v[i];
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw fail('Type', `${op}: shape[${i}] must be an integer >= 0, got ${describe(d)}`);
    }
  }
  return v;
}

function checkOptions(v, op) {
  if (v === undefined) return {};
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw fail('Type', `${op}: options must be an object, got ${describe(v)}`);
  }
  return v;
}

function dtypeCode(dtype, op) {
  const code = DTYPE_CODE[dtype];
  if (code === undefined || typeof dtype !== 'string') {
    throw fail('Type', `${op}: dtype must be "float32", "int32" or "bool", got ${describe(dtype)}`);
  }
  return code;
}

/** Maps dim in [-rank, rank) to [0, rank) (the engine's check::dim message). */
function normDim(dim, rank, op) {
  checkInt(dim, op, 'dim');
  if (dim < -rank || dim >= rank) {
    throw fail('Index', `${op}: dim ${dim} is out of range for a tensor of rank ${rank} (expected ${-rank} <= dim < ${rank})`);
  }
  return dim < 0 ? dim + rank : dim;
}

// ---------------------------------------------------------------- nested data

const TYPED_DEFAULT_DTYPE = new Map([
  [Float32Array, 'float32'], [Float64Array, 'float32'], [Int32Array, 'int32'],
  [Int16Array, 'int32'], [Int8Array, 'int32'], [Uint8Array, 'int32'], [Uint16Array, 'int32'],
  [Uint32Array, 'int32'], [Uint8ClampedArray, 'int32'],
]);

function isArrayLike(v) {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

function posString(path) {
  return `data${path.map((i) => `[${i}]`).join('')}`;
}

/**
 * Shape of nested arrays (typed arrays allowed as rows) from the first element of each
 * level, and whether every leaf is a boolean. Throws Shape for ragged rows and Type for
 * non-numeric leaves, naming the position.
 */
function inferNested(data, op) {
  const shape = [];
  let v = data;
  while (isArrayLike(v)) {
    shape.push(v.length);
    if (v.length === 0) break;
    v = v[0];
  }
  return shape;
}

function flattenNested(data, shape, op) {
  let total = 1;
  for (const d of shape) total *= d;
  const out = new Array(total);
  let k = 0;
  let allBool = true;
  const path = [];
  const rank = shape.length;
  const walk = (v, depth) => {
    if (depth === rank) {
      if (typeof v === 'number') {
        allBool = false;
        out[k++] = v;
      } else if (typeof v === 'boolean') {
        out[k++] = v ? 1 : 0;
      } else if (isArrayLike(v)) {
        throw fail('Shape', `${op}: ragged nested array: ${posString(path)} is an array, expected a number (the first row nests ${rank} deep)`);
      } else {
        throw fail('Type', `${op}: ${posString(path)} must be a number or a boolean, got ${describe(v)}`);
      }
      return;
    }
    if (!isArrayLike(v)) {
      if (typeof v === 'number' || typeof v === 'boolean') {
        throw fail('Shape', `${op}: ragged nested array: ${posString(path)} is a ${typeof v}, expected an array of length ${shape[depth]} (as ${posString(path.map(() => 0))})`);
      }
      throw fail('Type', `${op}: ${posString(path)} must be an array, a number or a boolean, got ${describe(v)}`);
    }
    if (v.length !== shape[depth]) {
      throw fail('Shape', `${op}: ragged nested array: ${posString(path)} has ${v.length} elements, expected ${shape[depth]} (as ${posString(path.map(() => 0))})`);
    }
    if (ArrayBuffer.isView(v) && depth === rank - 1) {
      allBool = false;
      for (let i = 0; i < v.length; i++) out[k++] = Number(v[i]);
      return;
    }
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      walk(v[i], depth + 1);
      path.pop();
    }
  };
  walk(data, 0);
  return { values: out, allBool: allBool && total > 0 };
}

/** values (array or typed array of numbers) -> the typed array of dtype, range-checked. */
function toTypedArray(values, dtype, op) {
  const n = values.length;
  if (dtype === 'float32') {
    return values instanceof Float32Array ? values : Float32Array.from(values);
  }
  if (dtype === 'bool') {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = values[i] !== 0 ? 1 : 0;
    return out;
  }
  if (values instanceof Int32Array) return values;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = Number(values[i]);
    if (!(v >= INT32_MIN && v < INT32_MAX + 1)) {
      throw fail('Value', `${op}: value ${v} at flat index ${i} does not fit in int32`);
    }
    out[i] = Math.trunc(v);
  }
  return out;
}

// ---------------------------------------------------------------- the API

/**
 * Builds the tensor API of one engine instance onto `kiln` and returns the internals.
 * @param {object} kiln the public object under construction
 * @param {object} raw the Emscripten module
 * @param {{autoDispose?: boolean}} [options] init()'s options
 */
export function installTensor(kiln, raw, options = {}) {
  let liveTensors = 0;
  const scopes = [];
  // Opt-in (init({autoDispose: true})): registering every tensor with a
  // FinalizationRegistry costs ~3 µs per tensor, more than a small op itself.
  const registry =
    options.autoDispose === true && typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((handle) => {
          // A Tensor the program lost without dispose(): free its memory now.
          try {
            if (!handle.isDeleted()) {
              handle.delete();
              liveTensors--;
            }
          } catch {
            /* already gone */
          }
        })
      : null;

  function track(obj) {
    if (scopes.length > 0) {
      const scope = scopes[scopes.length - 1];
      scope.add(obj);
      obj._scope = scope;
    }
  }

  /** RawTensor -> a new JS Tensor that owns it. */
  function wrap(handle) {
    const t = new Tensor(TOKEN, handle);
    liveTensors++;
    if (registry) registry.register(t, handle, t);
    track(t);
    return t;
  }

  /** Tensor -> its RawTensor; Type for anything else, Disposed after dispose(). */
  function unwrap(t, op, what = 'tensor') {
    if (!(t instanceof Tensor)) {
      throw fail('Type', `${op}: ${what} must be a kiln Tensor, got ${describe(t)}`);
    }
    const handle = t._h;
    if (handle === null) {
      throw fail('Disposed', `${op}: the ${what} was disposed (by dispose() or at the end of the tidy() that created it)`);
    }
    return handle;
  }

  /** An int32 index tensor from a Tensor or an array of integers (a temporary). */
  function indexArg(v, op, what) {
    if (v instanceof Tensor) return { handle: unwrap(v, op, what), temp: null };
    if (Array.isArray(v) || v instanceof Int32Array) {
      if (Array.isArray(v)) checkIntArray(v, op, what);
      const temp = raw.tFromTypedArray(toTypedArray(v, 'int32', op), [v.length], 1);
      return { handle: temp, temp };
    }
    throw fail('Type', `${op}: ${what} must be an int32 Tensor or an array of integers, got ${describe(v)}`);
  }

  /** Scalars as operands: numbers, or booleans (as 0/1). */
  function isScalar(v) {
    return typeof v === 'number' || typeof v === 'boolean';
  }

  function binary(self, other, op, name) {
    const a = unwrap(self, name);
    if (isScalar(other)) return wrap(raw.tBinaryScalar(BIN[op], a, Number(other), false));
    return wrap(raw.tBinary(BIN[op], a, unwrap(other, name, 'other')));
  }

  function compare(self, other, op, name) {
    const a = unwrap(self, name);
    if (isScalar(other)) return wrap(raw.tCompareScalar(CMP[op], a, Number(other)));
    return wrap(raw.tCompare(CMP[op], a, unwrap(other, name, 'other')));
  }

  function compareElem(self, other, op, name) {
    const a = unwrap(self, name);
    if (!isScalar(other)) throw fail('Type', `${name}: the value must be a number, got ${describe(other)}`);
    return wrap(raw.tCompareScalar(CMP[op], a, Number(other)));
  }

  function unary(self, op, name) {
    return wrap(raw.tUnary(UN[op], unwrap(self, name)));
  }

  function reduceAll(self, op, name, dim) {
    const a = unwrap(self, name);
    if (dim !== undefined) {
      checkInt(dim, name, 'dim');
      return wrap(raw.tReduceDim(RED[op], a, dim));
    }
    return wrap(raw.tReduce(RED[op], a));
  }

  function reduceDim(self, op, name, dim) {
    const a = unwrap(self, name);
    checkInt(dim, name, 'dim');
    return wrap(raw.tReduceDim(RED[op], a, dim));
  }

  function pairOf(arr) {
    const values = wrap(arr[0]);
    const indices = wrap(arr[1]);
    return [values, indices];
  }

  /** Normalises slice ranges to [start, end | null, step] triples. */
  function sliceRanges(ranges, op) {
    if (!Array.isArray(ranges)) {
      throw fail('Type', `${op}: ranges must be an array such as [[0, 2], [1, 3]], got ${describe(ranges)}`);
    }
    return ranges.map((r, i) => {
      if (r === null || r === undefined) return [0, null, 1];
      if (typeof r === 'number') {
        checkInt(r, op, `ranges[${i}]`);
        return r === -1 ? [-1, null, 1] : [r, r + 1, 1];
      }
      if (!Array.isArray(r) || r.length > 3) {
        throw fail('Type', `${op}: ranges[${i}] must be [start, end], [start, end, step], an index, or null, got ${describe(r)}`);
      }
      const start = r[0] === undefined || r[0] === null ? 0 : checkInt(r[0], op, `ranges[${i}][0] (start)`);
      const end = r[1] === undefined || r[1] === null ? null : checkInt(r[1], op, `ranges[${i}][1] (end)`);
      const step = r[2] === undefined || r[2] === null ? 1 : checkInt(r[2], op, `ranges[${i}][2] (step)`);
      return [start, end, step];
    });
  }

  function shapeOf(t) {
    return t._shape ?? (t._shape = t._h.shape());
  }

  // ---------------------------------------------------------------- Tensor

  class Tensor {
    constructor(token, handle) {
      if (token !== TOKEN) {
        throw fail('Type', 'Tensor: use kiln.Tensor.fromData(data), zeros(shape), ... to create tensors (the constructor is internal)');
      }
      this._h = handle;
      this._shape = undefined;
      this._scope = null;
    }

    // ---- creation

    static fromData(data, options) {
      const op = 'fromData';
      const opts = checkOptions(options, op);
      if (opts.dtype !== undefined) dtypeCode(opts.dtype, op);
      if (opts.shape !== undefined) checkShape(opts.shape, op);
      let values;
      let shape;
      let dtype = opts.dtype;
      if (typeof data === 'number' || typeof data === 'boolean') {
        values = [Number(data)];
        shape = [];
        dtype ??= typeof data === 'boolean' ? 'bool' : 'float32';
      } else if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
        const def = TYPED_DEFAULT_DTYPE.get(data.constructor);
        if (def === undefined) {
          throw fail('Type', `${op}: ${data.constructor.name} is not supported (use Float32Array, Int32Array, Uint8Array, ...)`);
        }
        values = data;
        shape = [data.length];
        dtype ??= def;
      } else if (Array.isArray(data)) {
        shape = inferNested(data, op);
        const flat = flattenNested(data, shape, op);
        values = flat.values;
        dtype ??= flat.allBool ? 'bool' : 'float32';
      } else {
        throw fail('Type', `${op}: data must be a number, a boolean, a (nested) array or a typed array, got ${describe(data)}`);
      }
      if (opts.shape !== undefined) {
        const n = opts.shape.reduce((a, b) => a * b, 1);
        if (n !== values.length) {
          throw fail('Shape', `${op}: data has ${values.length} values, shape [${opts.shape.join(', ')}] needs ${n}`);
        }
        shape = opts.shape;
      }
      return wrap(raw.tFromTypedArray(toTypedArray(values, dtype, op), shape, DTYPE_CODE[dtype]));
    }

    static zeros(shape, options) {
      return Tensor.full(shape, 0, options, 'zeros');
    }

    static ones(shape, options) {
      return Tensor.full(shape, 1, options, 'ones');
    }

    static full(shape, value, options, opName = 'full') {
      const opts = checkOptions(options, opName);
      checkShape(shape, opName);
      if (!isScalar(value)) throw fail('Type', `${opName}: value must be a number or a boolean, got ${describe(value)}`);
      const dtype = opts.dtype ?? (typeof value === 'boolean' ? 'bool' : 'float32');
      return wrap(raw.tFull(shape, Number(value), dtypeCode(dtype, opName)));
    }

    static random(shape, distribution, options) {
      const op = 'random';
      const opts = checkOptions(options, op);
      checkShape(shape, op);
      const dtype = opts.dtype ?? 'float32';
      const code = dtypeCode(dtype, op);
      if (opts.seed !== undefined) kiln.seed(opts.seed);
      let kind = 0;
      let a = 0;
      let b = 1;
      const d = distribution;
      if (d === undefined || d === null || d === 'default') {
        kind = 0;
      } else if (typeof d === 'object' && !Array.isArray(d) && Object.keys(d).length === 1) {
        if (d.uniform !== undefined) {
          kind = 1;
          if (!Array.isArray(d.uniform) || d.uniform.length !== 2) throw fail('Type', `${op}: uniform must be [low, high], got ${describe(d.uniform)}`);
          [a, b] = d.uniform.map((v, i) => checkNumber(v, op, `uniform[${i}]`));
        } else if (d.normal !== undefined) {
          kind = 2;
          if (!Array.isArray(d.normal) || d.normal.length !== 2) throw fail('Type', `${op}: normal must be [mean, std], got ${describe(d.normal)}`);
          [a, b] = d.normal.map((v, i) => checkNumber(v, op, `normal[${i}]`));
        } else if (d.bernoulli !== undefined) {
          kind = 3;
          a = checkNumber(d.bernoulli, op, 'bernoulli');
        } else {
          throw fail('Type', `${op}: distribution must be {uniform: [a, b]}, {normal: [mean, std]} or {bernoulli: p}, got keys ${Object.keys(d).join(', ')}`);
        }
      } else {
        throw fail('Type', `${op}: distribution must be {uniform: [a, b]}, {normal: [mean, std]} or {bernoulli: p}, got ${describe(d)}`);
      }
      return wrap(raw.tRandom(shape, kind, a, b, code));
    }

    static arange(start, end, step, options) {
      const op = 'arange';
      if (typeof step === 'object' && step !== null) {
        options = step;
        step = undefined;
      }
      if (typeof end === 'object' && end !== null) {
        options = end;
        end = undefined;
      }
      const opts = checkOptions(options, op);
      checkNumber(start, op, 'start');
      if (end === undefined) {
        end = start;
        start = 0;
      }
      checkNumber(end, op, 'end');
      step = step === undefined ? 1 : checkNumber(step, op, 'step');
      const allInt = Number.isInteger(start) && Number.isInteger(end) && Number.isInteger(step);
      const dtype = opts.dtype ?? (allInt ? 'int32' : 'float32');
      if (step === 0) throw fail('Value', `${op}: step must not be 0`);
      return wrap(raw.tArange(start, end, step, dtypeCode(dtype, op)));
    }

    static eye(n, m, options) {
      const op = 'eye';
      if (typeof m === 'object' && m !== null) {
        options = m;
        m = undefined;
      }
      const opts = checkOptions(options, op);
      checkInt(n, op, 'n');
      if (m === undefined) m = n;
      checkInt(m, op, 'm');
      return wrap(raw.tEye(n, m, dtypeCode(opts.dtype ?? 'float32', op)));
    }

    static zerosLike(t, options) {
      const opts = checkOptions(options, 'zerosLike');
      unwrap(t, 'zerosLike');
      return Tensor.full(t.shape, 0, { dtype: opts.dtype ?? t.dtype }, 'zerosLike');
    }

    static onesLike(t, options) {
      const opts = checkOptions(options, 'onesLike');
      unwrap(t, 'onesLike');
      return Tensor.full(t.shape, 1, { dtype: opts.dtype ?? t.dtype }, 'onesLike');
    }

    static fullLike(t, value, options) {
      const opts = checkOptions(options, 'fullLike');
      unwrap(t, 'fullLike');
      return Tensor.full(t.shape, value, { dtype: opts.dtype ?? t.dtype }, 'fullLike');
    }

    static cat(tensors, dim = 0) {
      const op = 'cat';
      if (!Array.isArray(tensors)) throw fail('Type', `${op}: tensors must be an array of Tensors, got ${describe(tensors)}`);
      checkInt(dim, op, 'dim');
      const handles = tensors.map((t, i) => unwrap(t, op, `tensors[${i}]`));
      return wrap(raw.tCat(handles, dim));
    }

    static stack(tensors, dim = 0) {
      const op = 'stack';
      if (!Array.isArray(tensors)) throw fail('Type', `${op}: tensors must be an array of Tensors, got ${describe(tensors)}`);
      if (tensors.length === 0) throw fail('Value', `${op}: expected at least one tensor, got none`);
      checkInt(dim, op, 'dim');
      const handles = tensors.map((t, i) => unwrap(t, op, `tensors[${i}]`));
      const first = shapeOf(tensors[0]);
      for (let i = 1; i < tensors.length; i++) {
        const s = shapeOf(tensors[i]);
        if (s.length !== first.length || s.some((d, j) => d !== first[j])) {
          throw fail('Shape', `${op}: all tensors must have the same shape: tensor 0 is [${first.join(', ')}], tensor ${i} is [${s.join(', ')}]`);
        }
      }
      const d = normDim(dim, first.length + 1, op);
      const shape = [...first.slice(0, d), 1, ...first.slice(d)];
      const lifted = handles.map((h) => raw.tReshape(h, shape));
      try {
        return wrap(raw.tCat(lifted, d));
      } finally {
        for (const h of lifted) h.delete();
      }
    }

    // ---- properties

    /** The dims (a fresh array). */
    get shape() {
      unwrap(this, 'shape');
      return shapeOf(this).slice();
    }

    get dtype() {
      return DTYPES[unwrap(this, 'dtype').dtype()];
    }

    get rank() {
      unwrap(this, 'rank');
      return shapeOf(this).length;
    }

    get numel() {
      unwrap(this, 'numel');
      return shapeOf(this).reduce((a, b) => a * b, 1);
    }

    get size() {
      return this.numel;
    }

    get isDisposed() {
      return this._h === null;
    }

    get isRequireGrad() {
      return unwrap(this, 'isRequireGrad').isTracked();
    }

    // ---- data

    dataSync() {
      return raw.tDataSync(unwrap(this, 'dataSync'));
    }

    /** Nested arrays (numbers; booleans for bool); a number for rank 0. */
    toArray() {
      const h = unwrap(this, 'toArray');
      const shape = shapeOf(this);
      const flat = raw.tDataSync(h);
      const isBool = h.dtype() === 2;
      const get = isBool ? (i) => flat[i] !== 0 : (i) => flat[i];
      if (shape.length === 0) return get(0);
      let k = 0;
      const build = (depth) => {
        const n = shape[depth];
        const out = new Array(n);
        if (depth === shape.length - 1) {
          for (let i = 0; i < n; i++) out[i] = get(k++);
        } else {
          for (let i = 0; i < n; i++) out[i] = build(depth + 1);
        }
        return out;
      };
      return build(0);
    }

    item() {
      const h = unwrap(this, 'item');
      const n = h.numel();
      if (n !== 1) {
        throw fail('Shape', `item: expected a tensor with one element, got shape [${shapeOf(this).join(', ')}] (${n} elements)`);
      }
      const v = raw.tDataSync(h)[0];
      return h.dtype() === 2 ? v !== 0 : v;
    }

    toString(options) {
      const op = 'toString';
      const opts = checkOptions(options, op);
      let precision = -1;
      if (opts.precision !== undefined) {
        checkInt(opts.precision, op, 'precision');
        if (opts.precision < 0 || opts.precision > 20) throw fail('Value', `${op}: precision must be in [0, 20], got ${opts.precision}`);
        precision = opts.precision;
      }
      if (this._h === null) return 'Tensor { disposed }';
      return raw.tToString(unwrap(this, op), precision);
    }

    [Symbol.for('nodejs.util.inspect.custom')]() {
      return this.toString();
    }

    /** A new Tensor sharing the buffer (and graph node). Dispose both. */
    clone() {
      return wrap(unwrap(this, 'clone').clone());
    }

    dispose() {
      const h = this._h;
      if (h === null) return;
      this._h = null;
      if (registry) registry.unregister(this);
      if (this._scope) {
        this._scope.delete(this);
        this._scope = null;
      }
      h.delete();
      liveTensors--;
    }

    [Symbol.dispose]() {
      this.dispose();
    }

    // ---- element-wise arithmetic

    add(other) { return binary(this, other, 'add', 'add'); }
    sub(other) { return binary(this, other, 'sub', 'sub'); }
    mul(other) { return binary(this, other, 'mul', 'mul'); }
    div(other) { return binary(this, other, 'div', 'div'); }
    remainder(other) { return binary(this, other, 'rem', 'remainder'); }
    fmod(other) { return binary(this, other, 'fmod', 'fmod'); }
    divTrunc(other) { return binary(this, other, 'divTrunc', 'divTrunc'); }
    pow(other) { return binary(this, other, 'pow', 'pow'); }
    powf(other) { return binary(this, other, 'pow', 'powf'); }
    powi(other) { return binary(this, other, 'pow', 'powi'); }
    maxPair(other) { return binary(this, other, 'max', 'maxPair'); }
    minPair(other) { return binary(this, other, 'min', 'minPair'); }

    /** other - this (a number on the left). */
    rsub(other) {
      if (!isScalar(other)) throw fail('Type', `rsub: the value must be a number, got ${describe(other)}`);
      return wrap(raw.tBinaryScalar(BIN.sub, unwrap(this, 'rsub'), Number(other), true));
    }
    /** other / this (a number on the left). */
    rdiv(other) {
      if (!isScalar(other)) throw fail('Type', `rdiv: the value must be a number, got ${describe(other)}`);
      return wrap(raw.tBinaryScalar(BIN.div, unwrap(this, 'rdiv'), Number(other), true));
    }

    neg() { return unary(this, 'neg', 'neg'); }
    abs() { return unary(this, 'abs', 'abs'); }
    sign() { return unary(this, 'sign', 'sign'); }
    exp() { return unary(this, 'exp', 'exp'); }
    log() { return unary(this, 'log', 'log'); }
    log1p() { return unary(this, 'log1p', 'log1p'); }
    sqrt() { return unary(this, 'sqrt', 'sqrt'); }
    sin() { return unary(this, 'sin', 'sin'); }
    cos() { return unary(this, 'cos', 'cos'); }
    tanh() { return unary(this, 'tanh', 'tanh'); }
    ceil() { return unary(this, 'ceil', 'ceil'); }
    floor() { return unary(this, 'floor', 'floor'); }
    round() { return unary(this, 'round', 'round'); }
    recip() { return unary(this, 'recip', 'recip'); }
    erf() { return unary(this, 'erf', 'erf'); }
    sigmoid() { return unary(this, 'sigmoid', 'sigmoid'); }
    relu() { return unary(this, 'relu', 'relu'); }
    gelu(options) {
      const opts = checkOptions(options, 'gelu');
      if (opts.approximate !== undefined && opts.approximate !== 'none' && opts.approximate !== 'tanh') {
        throw fail('Value', `gelu: approximate must be "none" or "tanh", got ${describe(opts.approximate)}`);
      }
      return unary(this, opts.approximate === 'tanh' ? 'geluTanh' : 'gelu', 'gelu');
    }
    silu() { return unary(this, 'silu', 'silu'); }
    leakyRelu(negativeSlope = 0.01) {
      checkNumber(negativeSlope, 'leakyRelu', 'negativeSlope');
      return wrap(raw.tLeakyRelu(unwrap(this, 'leakyRelu'), negativeSlope));
    }
    softplus(beta = 1, threshold = 20) {
      checkNumber(beta, 'softplus', 'beta');
      checkNumber(threshold, 'softplus', 'threshold');
      return wrap(raw.tSoftplus(unwrap(this, 'softplus'), beta, threshold));
    }
    softmax(dim) {
      checkInt(dim, 'softmax', 'dim');
      return wrap(raw.tSoftmax(unwrap(this, 'softmax'), dim, false));
    }
    logSoftmax(dim) {
      checkInt(dim, 'logSoftmax', 'dim');
      return wrap(raw.tSoftmax(unwrap(this, 'logSoftmax'), dim, true));
    }

    clamp(min, max) {
      const op = 'clamp';
      const h = unwrap(this, op);
      const hasMin = min !== undefined && min !== null;
      const hasMax = max !== undefined && max !== null;
      if (hasMin) checkNumber(min, op, 'min');
      if (hasMax) checkNumber(max, op, 'max');
      return wrap(raw.tClamp(h, hasMin, hasMin ? min : 0, hasMax, hasMax ? max : 0));
    }
    clampMin(min) {
      checkNumber(min, 'clampMin', 'min');
      return wrap(raw.tClamp(unwrap(this, 'clampMin'), true, min, false, 0));
    }
    clampMax(max) {
      checkNumber(max, 'clampMax', 'max');
      return wrap(raw.tClamp(unwrap(this, 'clampMax'), false, 0, true, max));
    }

    /**
     * torch.matmul: [..., m, k] x [..., k, n] -> [..., m, n] with batch broadcasting; a
     * rank-1 lhs is a row [k] (its dim removed after), a rank-1 rhs a column.
     */
    matmul(other) {
      const op = 'matmul';
      const a = unwrap(this, op);
      const b = unwrap(other, op, 'other');
      const sa = shapeOf(this);
      const sb = shapeOf(other);
      if (sa.length === 0 || sb.length === 0) {
        throw fail('Rank', `${op}: both operands need rank >= 1: lhs [${sa.join(', ')}] vs rhs [${sb.join(', ')}]`);
      }
      if (sa.length >= 2 && sb.length >= 2) return wrap(raw.tMatmul(a, b));
      const k1 = sa[sa.length - 1];
      const k2 = sb.length === 1 ? sb[0] : sb[sb.length - 2];
      if (k1 !== k2) {
        throw fail('Shape', `${op}: inner dimensions differ: lhs [${sa.join(', ')}] vs rhs [${sb.join(', ')}] (${k1} != ${k2})`);
      }
      const temps = [];
      try {
        const la = sa.length === 1 ? (temps.push(raw.tReshape(a, [1, sa[0]])), temps[temps.length - 1]) : a;
        const lb = sb.length === 1 ? (temps.push(raw.tReshape(b, [sb[0], 1])), temps[temps.length - 1]) : b;
        const prod = raw.tMatmul(la, lb);
        temps.push(prod);
        const ps = prod.shape();
        let out = ps;
        if (sb.length === 1) out = out.slice(0, -1);
        if (sa.length === 1) out = sb.length === 1 ? out.slice(0, -1) : [...out.slice(0, -2), out[out.length - 1]];
        return wrap(raw.tReshape(prod, out));
      } finally {
        for (const t of temps) t.delete();
      }
    }

    // ---- comparisons and logic

    equal(other) { return compare(this, other, 'equal', 'equal'); }
    notEqual(other) { return compare(this, other, 'notEqual', 'notEqual'); }
    greater(other) { return compare(this, other, 'greater', 'greater'); }
    greaterEqual(other) { return compare(this, other, 'greaterEqual', 'greaterEqual'); }
    lower(other) { return compare(this, other, 'lower', 'lower'); }
    lowerEqual(other) { return compare(this, other, 'lowerEqual', 'lowerEqual'); }
    equalElem(v) { return compareElem(this, v, 'equal', 'equalElem'); }
    notEqualElem(v) { return compareElem(this, v, 'notEqual', 'notEqualElem'); }
    greaterElem(v) { return compareElem(this, v, 'greater', 'greaterElem'); }
    greaterEqualElem(v) { return compareElem(this, v, 'greaterEqual', 'greaterEqualElem'); }
    lowerElem(v) { return compareElem(this, v, 'lower', 'lowerElem'); }
    lowerEqualElem(v) { return compareElem(this, v, 'lowerEqual', 'lowerEqualElem'); }

    isNan() { return wrap(raw.tBoolUnary(0, unwrap(this, 'isNan'))); }
    isInf() { return wrap(raw.tBoolUnary(1, unwrap(this, 'isInf'))); }
    containsNan() {
      const h = unwrap(this, 'containsNan');
      const nan = raw.tBoolUnary(0, h);
      try {
        return wrap(raw.tReduce(RED.any, nan));
      } finally {
        nan.delete();
      }
    }
    boolNot() { return wrap(raw.tBoolUnary(2, unwrap(this, 'boolNot'))); }
    boolAnd(other) { return wrap(raw.tBoolBinary(0, unwrap(this, 'boolAnd'), unwrap(other, 'boolAnd', 'other'))); }
    boolOr(other) { return wrap(raw.tBoolBinary(1, unwrap(this, 'boolOr'), unwrap(other, 'boolOr', 'other'))); }
    boolXor(other) { return wrap(raw.tBoolBinary(2, unwrap(this, 'boolXor'), unwrap(other, 'boolXor', 'other'))); }

    // ---- casts and masks

    float() { return wrap(raw.tCast(unwrap(this, 'float'), 0)); }
    int() { return wrap(raw.tCast(unwrap(this, 'int'), 1)); }
    bool() { return wrap(raw.tCast(unwrap(this, 'bool'), 2)); }
    /** Cast to a dtype by name. */
    cast(dtype) { return wrap(raw.tCast(unwrap(this, 'cast'), dtypeCode(dtype, 'cast'))); }

    maskWhere(mask, value) {
      const op = 'maskWhere';
      return wrap(raw.tMaskWhere(unwrap(this, op), unwrap(mask, op, 'mask'), unwrap(value, op, 'value')));
    }
    maskFill(mask, value) {
      const op = 'maskFill';
      const h = unwrap(this, op);
      const m = unwrap(mask, op, 'mask');
      if (!isScalar(value)) throw fail('Type', `${op}: value must be a number or a boolean, got ${describe(value)}`);
      return wrap(raw.tMaskFill(h, m, Number(value)));
    }

    // ---- reductions (whole-tensor ones give shape [1], as Burn; `dim` keeps the dim)

    sum(dim) { return reduceAll(this, 'sum', 'sum', dim); }
    mean(dim) { return reduceAll(this, 'mean', 'mean', dim); }
    prod(dim) { return reduceAll(this, 'prod', 'prod', dim); }
    max(dim) { return reduceAll(this, 'max', 'max', dim); }
    min(dim) { return reduceAll(this, 'min', 'min', dim); }
    any(dim) { return reduceAll(this, 'any', 'any', dim); }
    all(dim) { return reduceAll(this, 'all', 'all', dim); }
    sumDim(dim) { return reduceDim(this, 'sum', 'sumDim', dim); }
    meanDim(dim) { return reduceDim(this, 'mean', 'meanDim', dim); }
    prodDim(dim) { return reduceDim(this, 'prod', 'prodDim', dim); }
    maxDim(dim) { return reduceDim(this, 'max', 'maxDim', dim); }
    minDim(dim) { return reduceDim(this, 'min', 'minDim', dim); }
    anyDim(dim) { return reduceDim(this, 'any', 'anyDim', dim); }
    allDim(dim) { return reduceDim(this, 'all', 'allDim', dim); }
    maxDimWithIndices(dim) {
      checkInt(dim, 'maxDimWithIndices', 'dim');
      return pairOf(raw.tExtremeDimWithIndices(unwrap(this, 'maxDimWithIndices'), dim, false));
    }
    minDimWithIndices(dim) {
      checkInt(dim, 'minDimWithIndices', 'dim');
      return pairOf(raw.tExtremeDimWithIndices(unwrap(this, 'minDimWithIndices'), dim, true));
    }
    argmax(dim) {
      checkInt(dim, 'argmax', 'dim');
      return wrap(raw.tArgExtreme(unwrap(this, 'argmax'), dim, false));
    }
    argmin(dim) {
      checkInt(dim, 'argmin', 'dim');
      return wrap(raw.tArgExtreme(unwrap(this, 'argmin'), dim, true));
    }
    var(dim, unbiased = true) {
      const [v, m] = this.varMean(dim, unbiased, 'var');
      m.dispose();
      return v;
    }
    varBias(dim) {
      return this.var(dim, false);
    }
    varMean(dim, unbiased = true, opName = 'varMean') {
      checkInt(dim, opName, 'dim');
      checkBool(unbiased, opName, 'unbiased');
      return pairOf(raw.tVarMean(unwrap(this, opName), dim, unbiased));
    }
    sort(dim = -1, descending = false) {
      const [v, i] = this.sortWithIndices(dim, descending, 'sort');
      i.dispose();
      return v;
    }
    sortDescending(dim = -1) {
      return this.sort(dim, true);
    }
    argsort(dim = -1, descending = false) {
      const [v, i] = this.sortWithIndices(dim, descending, 'argsort');
      v.dispose();
      return i;
    }
    sortWithIndices(dim = -1, descending = false, opName = 'sortWithIndices') {
      checkInt(dim, opName, 'dim');
      checkBool(descending, opName, 'descending');
      return pairOf(raw.tSortWithIndices(unwrap(this, opName), dim, descending));
    }
    topk(k, dim = -1) {
      const [v, i] = this.topkWithIndices(k, dim, 'topk');
      i.dispose();
      return v;
    }
    topkWithIndices(k, dim = -1, opName = 'topkWithIndices') {
      unwrap(this, opName);
      checkInt(k, opName, 'k');
      const shape = shapeOf(this);
      const d = normDim(dim, shape.length, opName);
      if (k < 0 || k > shape[d]) {
        throw fail('Index', `${opName}: k = ${k} is out of range for dim ${dim} of size ${shape[d]} (shape [${shape.join(', ')}])`);
      }
      const [v, i] = this.sortWithIndices(d, true, opName);
      try {
        return [v.narrow(d, 0, k), i.narrow(d, 0, k)];
      } finally {
        v.dispose();
        i.dispose();
      }
    }

    // ---- shape

    reshape(shape) {
      const op = 'reshape';
      const h = unwrap(this, op);
      checkIntArray(shape, op, 'shape');
      return wrap(raw.tReshape(h, shape));
    }
    /** Merges dims start..=end (default: all) into one. */
    flatten(start = 0, end = -1) {
      const op = 'flatten';
      unwrap(this, op);
      const s = shapeOf(this);
      if (s.length === 0) return this.reshape([1]);
      const a = normDim(start, s.length, op);
      const b = normDim(end, s.length, op);
      if (a > b) throw fail('Index', `${op}: start dim ${start} is after end dim ${end}`);
      const merged = s.slice(a, b + 1).reduce((x, y) => x * y, 1);
      return this.reshape([...s.slice(0, a), merged, ...s.slice(b + 1)]);
    }
    /** Removes the size-1 dim `dim`, or every size-1 dim when dim is omitted (PyTorch). */
    squeeze(dim) {
      const op = 'squeeze';
      unwrap(this, op);
      const s = shapeOf(this);
      if (dim === undefined) return this.reshape(s.filter((d) => d !== 1));
      return this.squeezeDim(dim, op);
    }
    squeezeDim(dim, opName = 'squeezeDim') {
      unwrap(this, opName);
      const s = shapeOf(this);
      const d = normDim(dim, s.length, opName);
      if (s[d] !== 1) {
        throw fail('Shape', `${opName}: dim ${dim} has size ${s[d]}, expected 1 (shape [${s.join(', ')}])`);
      }
      return this.reshape([...s.slice(0, d), ...s.slice(d + 1)]);
    }
    /** Inserts a size-1 dim at `dim` of the output (-1 = last). */
    unsqueezeDim(dim, opName = 'unsqueezeDim') {
      unwrap(this, opName);
      const s = shapeOf(this);
      const d = normDim(dim, s.length + 1, opName);
      return this.reshape([...s.slice(0, d), 1, ...s.slice(d)]);
    }
    unsqueeze(dim) {
      return this.unsqueezeDim(dim, 'unsqueeze');
    }
    swapDims(dim1, dim2) {
      const op = 'swapDims';
      unwrap(this, op);
      const r = shapeOf(this).length;
      const a = normDim(dim1, r, op);
      const b = normDim(dim2, r, op);
      const axes = [...Array(r).keys()];
      axes[a] = b;
      axes[b] = a;
      return wrap(raw.tPermute(this._h, axes));
    }
    /** Swaps the last two dims: [..., m, n] -> [..., n, m]. */
    transpose() {
      const op = 'transpose';
      unwrap(this, op);
      const r = shapeOf(this).length;
      if (r < 2) throw fail('Rank', `${op}: needs rank >= 2, got shape [${shapeOf(this).join(', ')}]`);
      return this.swapDims(r - 2, r - 1);
    }
    permute(axes) {
      const op = 'permute';
      const h = unwrap(this, op);
      checkIntArray(axes, op, 'axes');
      return wrap(raw.tPermute(h, axes));
    }
    expand(shape) {
      const op = 'expand';
      const h = unwrap(this, op);
      checkIntArray(shape, op, 'shape');
      return wrap(raw.tExpand(h, shape));
    }
    repeatDim(dim, times) {
      const op = 'repeatDim';
      const h = unwrap(this, op);
      checkInt(dim, op, 'dim');
      checkInt(times, op, 'times');
      return wrap(raw.tRepeatDim(h, dim, times));
    }
    repeat(times) {
      const op = 'repeat';
      unwrap(this, op);
      checkIntArray(times, op, 'times');
      const r = shapeOf(this).length;
      if (times.length !== r) throw fail('Rank', `${op}: expected ${r} repeat counts, got ${times.length}`);
      let h = this._h;
      const temps = [];
      try {
        for (let i = 0; i < r; i++) {
          if (times[i] !== 1) {
            h = raw.tRepeatDim(h, i, times[i]);
            temps.push(h);
          }
        }
        return wrap(temps.length ? temps.pop() : this._h.clone());
      } finally {
        for (const t of temps) t.delete();
      }
    }
    flip(dims) {
      const op = 'flip';
      const h = unwrap(this, op);
      checkIntArray(dims, op, 'dims');
      return wrap(raw.tFlip(h, dims));
    }
    narrow(dim, start, length) {
      const op = 'narrow';
      unwrap(this, op);
      const s = shapeOf(this);
      const d = normDim(dim, s.length, op);
      checkInt(start, op, 'start');
      checkInt(length, op, 'length');
      if (start < 0 || length < 0 || start > s[d] || length > s[d] - start) {
        throw fail('Index', `${op}: start ${start} and length ${length} are out of bounds for dim ${dim} of size ${s[d]}`);
      }
      const ranges = [];
      for (let i = 0; i < d; i++) ranges.push([0, null, 1]);
      ranges.push([start, start + length, 1]);
      return wrap(raw.tSlice(this._h, ranges));
    }
    chunk(chunks, dim = 0) {
      const op = 'chunk';
      unwrap(this, op);
      checkInt(chunks, op, 'chunks');
      if (chunks < 1) throw fail('Value', `${op}: chunks must be >= 1, got ${chunks}`);
      const s = shapeOf(this);
      const d = normDim(dim, s.length, op);
      const piece = s[d] === 0 ? 0 : Math.ceil(s[d] / chunks);
      if (piece === 0) return [this.clone()];
      return this.split(piece, d, op);
    }
    split(splitSize, dim = 0, opName = 'split') {
      unwrap(this, opName);
      checkInt(splitSize, opName, 'splitSize');
      if (splitSize < 1) throw fail('Value', `${opName}: splitSize must be >= 1, got ${splitSize}`);
      const s = shapeOf(this);
      const d = normDim(dim, s.length, opName);
      const out = [];
      for (let start = 0; start < s[d]; start += splitSize) {
        out.push(this.narrow(d, start, Math.min(splitSize, s[d] - start)));
      }
      if (out.length === 0) out.push(this.clone());
      return out;
    }
    splitWithSizes(sizes, dim = 0) {
      const op = 'splitWithSizes';
      unwrap(this, op);
      checkIntArray(sizes, op, 'sizes');
      const s = shapeOf(this);
      const d = normDim(dim, s.length, op);
      const total = sizes.reduce((a, b) => a + b, 0);
      sizes.forEach((v, i) => {
        if (v < 0) throw fail('Value', `${op}: sizes[${i}] is ${v}, expected >= 0`);
      });
      if (total !== s[d]) throw fail('Shape', `${op}: sizes sum to ${total}, dim ${dim} has size ${s[d]}`);
      const out = [];
      let start = 0;
      for (const v of sizes) {
        out.push(this.narrow(d, start, v));
        start += v;
      }
      return out;
    }
    /**
     * Sub-tensor by ranges, one per leading dim: [start, end] or [start, end, step]
     * (negative counts from the end, null/undefined end = to the end), a number i (that
     * index, dim kept), or null (the whole dim).
     */
    slice(ranges) {
      const op = 'slice';
      const h = unwrap(this, op);
      return wrap(raw.tSlice(h, sliceRanges(ranges, op)));
    }
    sliceAssign(ranges, values) {
      const op = 'sliceAssign';
      const h = unwrap(this, op);
      return wrap(raw.tSliceAssign(h, sliceRanges(ranges, op), unwrap(values, op, 'values')));
    }
    select(dim, indices) {
      const op = 'select';
      const h = unwrap(this, op);
      checkInt(dim, op, 'dim');
      const idx = indexArg(indices, op, 'indices');
      try {
        return wrap(raw.tSelect(h, dim, idx.handle));
      } finally {
        if (idx.temp) idx.temp.delete();
      }
    }
    selectAssign(dim, indices, values) {
      const op = 'selectAssign';
      const h = unwrap(this, op);
      checkInt(dim, op, 'dim');
      const v = unwrap(values, op, 'values');
      const idx = indexArg(indices, op, 'indices');
      try {
        return wrap(raw.tSelectAssign(h, dim, idx.handle, v));
      } finally {
        if (idx.temp) idx.temp.delete();
      }
    }
    gather(dim, indices) {
      const op = 'gather';
      const h = unwrap(this, op);
      checkInt(dim, op, 'dim');
      return wrap(raw.tGather(h, dim, unwrap(indices, op, 'indices')));
    }
    scatter(dim, indices, values) {
      const op = 'scatter';
      const h = unwrap(this, op);
      checkInt(dim, op, 'dim');
      return wrap(raw.tScatter(h, dim, unwrap(indices, op, 'indices'), unwrap(values, op, 'values')));
    }
    oneHot(numClasses) {
      const op = 'oneHot';
      const h = unwrap(this, op);
      checkInt(numClasses, op, 'numClasses');
      return wrap(raw.tOneHot(h, numClasses));
    }

    // ---- autodiff

    /** Marks this float32 tensor (in place) as a leaf whose gradient backward() computes; returns this. */
    requireGrad() {
      return this.setRequireGrad(true, 'requireGrad');
    }
    /** true: as requireGrad(); false: this tensor (in place) stops being tracked. Returns this. */
    setRequireGrad(require, opName = 'setRequireGrad') {
      const h = unwrap(this, opName);
      checkBool(require, opName, 'require');
      const next = raw.tSetRequireGrad(h, require);
      if (registry) {
        registry.unregister(this);
        registry.register(this, next, this);
      }
      this._h = next;
      h.delete();
      return this;
    }
    /** The same values, cut from the graph (a new Tensor). */
    detach() {
      return wrap(raw.tDetach(unwrap(this, 'detach')));
    }
    backward() {
      return wrapGradients(raw.tBackward(unwrap(this, 'backward')));
    }
    /** This tensor's gradient in grads (an untracked float32 Tensor), or undefined. */
    grad(grads) {
      const h = unwrap(this, 'grad');
      const g = raw.tGrad(h, unwrapGradients(grads, 'grad'));
      return g === undefined ? undefined : wrap(g);
    }
    /** Removes and returns this tensor's gradient from grads (or undefined). */
    gradRemove(grads) {
      const h = unwrap(this, 'gradRemove');
      const g = raw.tGradRemove(h, unwrapGradients(grads, 'gradRemove'));
      return g === undefined ? undefined : wrap(g);
    }
    /** Sets this tensor's gradient in grads. */
    gradReplace(grads, grad) {
      const h = unwrap(this, 'gradReplace');
      raw.tGradReplace(h, unwrapGradients(grads, 'gradReplace'), unwrap(grad, 'gradReplace', 'grad'));
    }
  }
  Object.defineProperty(Tensor.prototype, Symbol.toStringTag, { value: 'Tensor' });

  // ---------------------------------------------------------------- Gradients

  class Gradients {
    constructor(token, handle) {
      if (token !== TOKEN) throw fail('Type', 'Gradients: returned by tensor.backward() (the constructor is internal)');
      this._h = handle;
      this._scope = null;
    }
    /** The number of tensors that have a gradient. */
    get size() {
      return unwrapGradients(this, 'size').size();
    }
    get isDisposed() {
      return this._h === null;
    }
    /** The gradient of `tensor` (as tensor.grad(this)). */
    get(tensor) {
      unwrapGradients(this, 'Gradients.get');
      unwrap(tensor, 'Gradients.get');
      return tensor.grad(this);
    }
    dispose() {
      const h = this._h;
      if (h === null) return;
      this._h = null;
      if (registry) registry.unregister(this);
      if (this._scope) {
        this._scope.delete(this);
        this._scope = null;
      }
      h.delete();
    }
    [Symbol.dispose]() {
      this.dispose();
    }
  }

  function wrapGradients(handle) {
    const g = new Gradients(TOKEN, handle);
    if (registry) registry.register(g, handle, g);
    track(g);
    return g;
  }

  function unwrapGradients(g, op) {
    if (!(g instanceof Gradients)) {
      throw fail('Type', `${op}: grads must be the Gradients returned by backward(), got ${describe(g)}`);
    }
    if (g._h === null) throw fail('Disposed', `${op}: the Gradients were disposed`);
    return g._h;
  }

  // ---------------------------------------------------------------- scopes

  function collect(value, keep, depth) {
    if (value instanceof Tensor || value instanceof Gradients) {
      keep.add(value);
      return;
    }
    if (depth > 8 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) collect(v, keep, depth + 1);
    } else if (value instanceof Map) {
      for (const v of value.values()) collect(v, keep, depth + 1);
    } else if (Object.getPrototypeOf(value) === Object.prototype) {
      for (const v of Object.values(value)) collect(v, keep, depth + 1);
    }
  }

  function endScope(scope, keep) {
    const parent = scopes.length > 0 ? scopes[scopes.length - 1] : null;
    for (const obj of [...scope]) {
      if (keep.has(obj)) {
        obj._scope = parent;
        if (parent) parent.add(obj);
      } else {
        obj.dispose();
      }
    }
    scope.clear();
  }

  /**
   * Runs fn and disposes every Tensor (and Gradients) created inside it except those it
   * returns (also inside arrays, plain objects and Maps); nests.
   */
  function tidy(nameOrFn, maybeFn) {
    const fn = typeof nameOrFn === 'function' ? nameOrFn : maybeFn;
    if (typeof fn !== 'function') throw fail('Type', `tidy: expected a function, got ${describe(fn)}`);
    const scope = new Set();
    scopes.push(scope);
    let result;
    try {
      result = fn();
    } catch (e) {
      scopes.pop();
      endScope(scope, new Set());
      throw e;
    }
    scopes.pop();
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      endScope(scope, new Set());
      throw fail('State', 'tidy: fn returned a Promise; tidy only tracks synchronous code (await outside tidy, or dispose by hand)');
    }
    const keep = new Set();
    collect(result, keep, 0);
    endScope(scope, keep);
    return result;
  }

  /** Excludes a tensor from every enclosing tidy(); returns it. */
  function keep(t) {
    if (!(t instanceof Tensor) && !(t instanceof Gradients)) {
      throw fail('Type', `keep: expected a Tensor, got ${describe(t)}`);
    }
    if (t._scope) {
      t._scope.delete(t);
      t._scope = null;
    }
    return t;
  }

  /** Disposes every Tensor / Gradients in a value (arrays, plain objects, Maps). */
  function dispose(value) {
    const found = new Set();
    collect(value, found, 0);
    for (const t of found) t.dispose();
  }

  function noGrad(fn) {
    if (typeof fn !== 'function') throw fail('Type', `noGrad: expected a function, got ${describe(fn)}`);
    const previous = raw.isGradEnabled();
    raw.setGradEnabled(false);
    try {
      return fn();
    } finally {
      raw.setGradEnabled(previous);
    }
  }

  function memory() {
    const m = raw.memoryStats();
    m.tensors = liveTensors;
    return m;
  }

  function seed(n) {
    checkInt(n, 'seed', 'seed');
    raw.seed(n);
  }

  // ---------------------------------------------------------------- activation

  const act = (name, f) => (x, ...args) => {
    if (!(x instanceof Tensor)) unwrap(x, `activation.${name}`, 'x');
    return f(x, ...args);
  };
  const activation = Object.freeze({
    relu: act('relu', (x) => x.relu()),
    leakyRelu: act('leakyRelu', (x, slope = 0.01) => x.leakyRelu(slope)),
    sigmoid: act('sigmoid', (x) => x.sigmoid()),
    logSigmoid: act('logSigmoid', (x) => {
      // log σ(x) = -softplus(-x)
      const n = x.neg();
      try {
        const s = n.softplus();
        try {
          return s.neg();
        } finally {
          s.dispose();
        }
      } finally {
        n.dispose();
      }
    }),
    tanh: act('tanh', (x) => x.tanh()),
    gelu: act('gelu', (x, options) => x.gelu(options)),
    silu: act('silu', (x) => x.silu()),
    softplus: act('softplus', (x, beta = 1, threshold = 20) => x.softplus(beta, threshold)),
    softmax: act('softmax', (x, dim) => x.softmax(dim)),
    logSoftmax: act('logSoftmax', (x, dim) => x.logSoftmax(dim)),
    softmin: act('softmin', (x, dim) => {
      checkInt(dim, 'softmin', 'dim');
      const n = x.neg();
      try {
        return n.softmax(dim);
      } finally {
        n.dispose();
      }
    }),
  });

  Object.assign(kiln, {
    Tensor,
    Gradients,
    tidy,
    keep,
    dispose,
    noGrad,
    memory,
    seed,
    activation,
    backendInfo: () => raw.backendInfo(),
  });

  return {
    raw,
    Tensor,
    Gradients,
    wrap,
    unwrap,
    wrapGradients,
    unwrapGradients,
    fail,
    checks: { describe, checkNumber, checkInt, checkBool, checkIntArray, checkShape, checkOptions, dtypeCode, normDim },
  };
}
