// The functions of a split engine's initial module in an order that gzip compresses better
// (issue 17). Run by scripts/split_wasm.mjs on each initial module after scripts/split_stubs.mjs.
//
// gzip finds repeats within a 32 KB window; the linker lays functions out by object file, so
// look-alike bodies (the instantiations of one template, the Embind invokers, the destructors)
// lie far apart. Ordered by body size (in steps of 16 bytes), then by their first bytes, they
// meet: the core engine's initial module is 3.7 KB smaller gzip -9 for the same code.
// Only the numbering changes: every function index (call, ref.func, the element section, the
// exports, the start function) is renumbered; imports keep theirs; each body is otherwise copied
// byte for byte (its LEB128 call targets re-encoded). What the glue and the deferred module see
// is unchanged: exports by name, table slots by position.
//
//   node scripts/reorder_wasm.mjs X.wasm [--relaxed]   (rewrites X.wasm in place)
import { readFileSync, writeFileSync } from 'node:fs';
import { Reader, walkBody } from './relax_wasm.mjs';
import { encLeb, leb, sectionsOf } from './split_data.mjs';
import { elementPayload, elementSegments, functionImports, withPayloads } from './split_stubs.mjs';

/** Compares two bodies: by size in steps of 16 bytes, then byte by byte (up to 32). */
function compareBodies(a, b) {
  const d = (a.length >> 4) - (b.length >> 4);
  if (d !== 0) return d;
  const n = Math.min(32, a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * The defined functions of `bytes` in compareBodies' order (see the file comment), renumbered.
 * @param {Buffer} bytes a module without a "name" section
 * @param {{ acceptFinalMadd?: boolean, order?: number[] }} [options] acceptFinalMadd: the relaxed
 *   build's final relaxed_madd opcodes; order: the order to use (another build's `order`, for a
 *   module with the same function types) instead of compareBodies'
 * @returns {{ bytes: Buffer, order: number[] }} the reordered module, and its defined functions'
 *   former indices (among the defined ones) in their new order
 * @throws Error on a name section, an element segment wasm-split does not write, or anything
 *   the body walker does not understand
 */
export function reorderFunctions(bytes, { acceptFinalMadd = false, order: given = null } = {}) {
  const b = Buffer.from(bytes);
  const secs = sectionsOf(b);
  const sec = (id) => secs.find((s) => s.id === id);
  for (const s of secs.filter((x) => x.id === 0)) {
    const [n, i] = leb(b, s.start);
    if (b.subarray(i, i + n).toString() === 'name') throw new Error('reorder_wasm: the module has a name section (names would need renumbering)');
  }
  // A global initialised by ref.func would need renumbering too: refused (none in the engines,
  // which are built without reference types).
  const gsec = sec(6);
  if (gsec) {
    const r = new Reader(b, gsec.start, gsec.end);
    for (let n = r.u32(); n > 0; n--) {
      r.skip(2); // value type, mutability
      for (let op = r.byte(); op !== 0x0b; op = r.byte()) {
        if (op === 0x41) r.sleb(32);
        else if (op === 0x42) r.sleb(64);
        else if (op === 0x43) r.skip(4);
        else if (op === 0x44) r.skip(8);
        else if (op === 0x23) r.u32();
        else if (op === 0xd0) r.skip(1);
        else if (op === 0xfd && r.u32() === 0x0c) r.skip(16);
        else throw new Error(`reorder_wasm: a global initialised by opcode 0x${op.toString(16)} (ref.func would need renumbering)`);
      }
    }
  }
  const imported = functionImports(b).length;
  // the defined functions: type, body (locals + code), where its function indices are
  const fsec = sec(3);
  let [count, i] = leb(b, fsec.start);
  const types = [];
  for (let f = 0; f < count; f++) {
    let t;
    [t, i] = leb(b, i);
    types.push(t);
  }
  const csec = sec(10);
  let [bodies, k] = leb(b, csec.start);
  if (bodies !== count) throw new Error(`reorder_wasm: ${bodies} bodies for ${count} functions`);
  const funcs = [];
  for (let f = 0; f < count; f++) {
    let size;
    [size, k] = leb(b, k);
    const body = b.subarray(k, k + size);
    const refs = [];
    walkBody(new Reader(b, k, k + size), () => {}, acceptFinalMadd, (start, end) => refs.push([start - k, end - k]));
    funcs.push({ old: f, type: types[f], body, refs });
    k += size;
  }
  let order;
  if (given) {
    if (given.length !== count || new Set(given).size !== count || given.some((f) => !(Number.isInteger(f) && f >= 0 && f < count))) {
      throw new Error(`reorder_wasm: the given order is not a permutation of this module's ${count} functions`);
    }
    order = given.map((f) => funcs[f]);
  } else {
    order = [...funcs].sort((x, y) => compareBodies(x.body, y.body) || x.old - y.old);
  }
  const newIndex = new Array(count);
  order.forEach((fn, pos) => { newIndex[fn.old] = imported + pos; });
  const map = (index) => (index < imported ? index : newIndex[index - imported]);

  const payload = {};
  payload[3] = [...encLeb(count), ...order.flatMap((fn) => encLeb(fn.type))];
  const code = [encLeb(count)];
  for (const fn of order) {
    const parts = [];
    let at = 0;
    for (const [start, end] of fn.refs) {
      parts.push(fn.body.subarray(at, start));
      const [old] = leb(fn.body, start);
      parts.push(Buffer.from(encLeb(map(old))));
      at = end;
    }
    parts.push(fn.body.subarray(at));
    const body = Buffer.concat(parts);
    code.push(encLeb(body.length), body);
  }
  const codeBytes = Buffer.concat(code.map((x) => Buffer.from(x)));
  // exports: function exports renumbered
  const esec = sec(7);
  if (esec) {
    let [n, p] = leb(b, esec.start);
    const out = [...encLeb(n)];
    while (n-- > 0) {
      const [len, q] = leb(b, p);
      out.push(...b.subarray(p, q + len));
      p = q + len;
      const kind = b[p++];
      let index;
      [index, p] = leb(b, p);
      out.push(kind, ...encLeb(kind === 0 ? map(index) : index));
    }
    payload[7] = out;
  }
  // start function
  const ssec = sec(8);
  if (ssec) payload[8] = encLeb(map(leb(b, ssec.start)[0]));
  // element segments
  if (sec(9)) payload[9] = elementPayload(elementSegments(b).map(({ offset, funcs: fs }) => ({ offset, funcs: fs.map(map) })));

  payload[10] = codeBytes;
  return { bytes: withPayloads(b, secs, payload), order: order.map((fn) => fn.old) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  const before = readFileSync(file);
  const after = reorderFunctions(before, { acceptFinalMadd: process.argv.includes('--relaxed') }).bytes;
  writeFileSync(file, after);
  console.log(`${file}: ${before.length} -> ${after.length} bytes`);
}
