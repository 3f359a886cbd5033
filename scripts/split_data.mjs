// Moves the data that only deferred functions use into the deferred module (issue 17: what a
// page downloads). wasm-split moves functions, never data: every error message, vtable and table
// of the whole engine stayed in the module a page loads at init() (43 KB gzip of the core
// engine's 213 KB). Called by scripts/split_wasm.mjs after each split:
//
//   1. The link map (CMakeLists.txt links the split engines through scripts/link_map.mjs with
//      -Wl,--print-map) gives every input section's address and size in memory: an object
//      (a vtable, a table, one TU's constant) or the linker's merged string literals, which
//      this script cuts at their NULs into one unit per string. A TU's exception tables are
//      cut into one unit per function's table (their symbols).
//   2. What the primary module's code can reach: every `i32.const` and every load/store
//      `offset=` in its functions (wasm-dis) that falls in the data names a unit it uses (a
//      constant address is how compiled code names static data: a string, a vtable, a table,
//      a field of a static object, a suffix of a merged string), except a constant that is
//      directly an operand of a call of a deferred function (a `call_indirect` of a constant
//      slot holding a stub, split_stubs.mjs): the callee runs only after that call has
//      instantiated the deferred module, so what it reads there may move (the message parts a
//      throw site hands to its out-of-line thrower, kiln/core/str_cat.hpp throw_error). A
//      string is read forward from the address that names it, so a constant inside a string
//      (a literal the linker merged into another's tail) keeps that string's bytes from there
//      on; the bytes before it may move. An object is also kept when
//      it starts within 64 bytes after such an address (a folded `table[i - k]`; not an exception
//      table, which its landing pad names by its start), unless the constant is the address
//      operand of a load or store, which reads or writes exactly its bytes; a constant that is
//      only an operand of a comparison names nothing (codeConstants); a constant one past an
//      object's end keeps that object (a backward walk starts there); and whatever
//      a kept object points to (every aligned 32-bit word of it that is an address in the
//      data), transitively.
//   3. Every other unit is moved: zeroed in the primary module (its data segments re-cut
//      around the holes) and written by active data segments of the deferred module, which
//      imports the same memory. No segment of one module spans a byte of the other's units:
//      the deferred module is instantiated after the program has run, so a segment of it
//      spanning a kept object, even its zero bytes, would reset what the program wrote there. Instantiating the deferred module, which happens before any
//      of its functions runs (bindings/js/deferred.ts), writes them; the primary module's
//      functions never read them.
//   4. Checks: the primary's data and the deferred module's data together are the original
//      image byte for byte, no byte is in both, no segment of one overlaps a segment of the
//      other, and both modules validate. split_wasm.mjs then checks the move at run time
//      (checkTouched): the workload that chose the primary functions, run on the unsplit module
//      with every load and store reported, reads and writes no moved byte.
//      A folded index can reach further back than the window (the linked libraries hold
//      `states - 65` in musl's vfprintf, `flags_by_subtype - 97`, `legacy_chars - 512`, the
//      MessagePack parser's `trail - 784`: helper-76's review): the relocations of every object
//      the map names (llvm-objdump -r) list each such `symbol - k`, and a constant of the
//      primary's code equal to one keeps that symbol's object.
// Limits: addresses packed into i64.const or v128.const are not read (none points at moved data
// today), and --instrument-memory does not see memory.copy/memory.fill (none in the engines) or
// reads done in JS (the glue's copyWithin for large copies, UTF8ToString, Embind).
// The relaxed-SIMD primary module, whose data section is the SIMD128 primary's byte for byte
// (checked), gets the same new data section (replaceData).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const MERGED_STRINGS = /^<internal>:\(\.rodata/;
const EXCEPTION_TABLES = /:\(\.rodata\.gcc_except_table\)$/;
const WINDOW = 64;
const ZERO_RUN = 16; // a data segment is cut where at least this many zero bytes are

/** Unsigned LEB128 at b[i]: [value, next index]. (Shared by split_stubs.mjs, reorder_wasm.mjs.) */
export function leb(b, i) {
  let r = 0;
  let s = 0;
  for (;;) {
    const x = b[i++];
    r += (x & 0x7f) * 2 ** s;
    s += 7;
    if (x < 0x80) return [r, i];
  }
}
/** Signed 32-bit LEB128 at b[i], as an unsigned value: [value, next index]. */
export function sleb32(b, i) {
  let r = 0;
  let s = 0;
  let x;
  do {
    x = b[i++];
    r |= (x & 0x7f) << s;
    s += 7;
  } while (x & 0x80);
  if (s < 32 && x & 0x40) r |= -1 << s;
  return [r >>> 0, i];
}
/** The unsigned LEB128 bytes of n. */
export function encLeb(n) {
  const out = [];
  do {
    let x = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) x |= 0x80;
    out.push(x);
  } while (n > 0);
  return out;
}
/** The signed 32-bit LEB128 bytes of n. */
export function encSleb32(n) {
  const out = [];
  n |= 0;
  for (;;) {
    const x = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(x & 0x40)) || (n === -1 && x & 0x40)) {
      out.push(x);
      return out;
    }
    out.push(x | 0x80);
  }
}

/** The sections of a wasm module: [{ id, start, end }] (payload bounds), in order. */
export function sectionsOf(b, file = 'module') {
  if (b.readUInt32LE(0) !== 0x6d736100) throw new Error(`split_data: ${file} is not a wasm module`);
  const out = [];
  let i = 8;
  while (i < b.length) {
    const id = b[i];
    const [size, start] = leb(b, i + 1);
    out.push({ id, head: i, start, end: start + size });
    i = start + size;
  }
  return out;
}

/**
 * The head of an active segment (data or element) at b[i]: flags 0 (memory or table 0) and an
 * offset of one i32.const: [offset, index after it].
 * @throws Error naming `what` for any other form (wasm-ld and wasm-split write no other)
 */
export function activeSegmentOffset(b, i, what) {
  const flags = b[i++];
  if (flags !== 0 || b[i] !== 0x41) throw new Error(`${what} that is not active at an i32.const (flags ${flags})`);
  const [offset, next] = sleb32(b, i + 1);
  if (b[next] !== 0x0b) throw new Error(`${what} offset that is not one i32.const`);
  return [offset, next + 1];
}

/**
 * The entries of a module's section `id` (a count, then the entries), read one by one by
 * `entry(b, i)`, which returns [the entry, the offset after it]; [] without the section.
 */
export function sectionEntries(b, file, id, entry) {
  const sec = sectionsOf(b, file).find((s) => s.id === id);
  if (!sec) return [];
  let [n, i] = leb(b, sec.start);
  const out = [];
  while (n-- > 0) {
    let e;
    [e, i] = entry(b, i);
    out.push(e);
  }
  return out;
}

/** The active data segments of a module (memory 0, i32.const offsets): [{ offset, bytes }]. */
export function dataSegments(b, file) {
  return sectionEntries(b, file, 11, (bytes, at) => {
    const [offset, i] = activeSegmentOffset(bytes, at, `split_data: ${file}: a data segment`);
    const [size, start] = leb(bytes, i);
    return [{ offset, bytes: bytes.subarray(start, start + size) }, start + size];
  });
}

/** The memory image of segments: a Uint8Array from 0 to the end of the last one. */
function image(segments) {
  const end = Math.max(0, ...segments.map((s) => s.offset + s.bytes.length));
  const mem = new Uint8Array(end);
  for (const s of segments) mem.set(s.bytes, s.offset);
  return mem;
}

/**
 * The non-zero runs of mem[lo, hi), cut where ZERO_RUN or more zero bytes are: [{ offset, bytes }].
 * With `mask`, only bytes whose mask is set are covered: a segment never spans an unmasked byte,
 * zero or not.
 */
function cut(mem, lo = 0, hi = mem.length, mask = null) {
  if (mask) {
    const out = [];
    for (let i = lo; i < hi;) {
      while (i < hi && !mask[i]) i++;
      const start = i;
      while (i < hi && mask[i]) i++;
      if (i > start) out.push(...cut(mem, start, i));
    }
    return out;
  }
  const out = [];
  let i = lo;
  while (i < hi) {
    while (i < hi && mem[i] === 0) i++;
    if (i >= hi) break;
    const start = i;
    let last = i; // last non-zero byte
    while (i < hi && i - last <= ZERO_RUN) {
      if (mem[i] !== 0) last = i;
      i++;
    }
    out.push({ offset: start, bytes: mem.subarray(start, last + 1) });
    i = last + 1;
  }
  return out;
}

function section(id, payload) {
  return Buffer.concat([Buffer.from([id, ...encLeb(payload.length)]), payload]);
}
function dataPayload(segments) {
  const parts = [Buffer.from(encLeb(segments.length))];
  for (const s of segments) {
    parts.push(Buffer.from([0, 0x41, ...encSleb32(s.offset), 0x0b, ...encLeb(s.bytes.length)]), Buffer.from(s.bytes));
  }
  return Buffer.concat(parts);
}

/** The objects of the DATA part of a link map with bytes: [{ start, end, name }], by address. */
export function mapObjects(text, file) {
  const objects = [];
  let output = null;
  for (const line of text.split('\n')) {
    const m = /^ *([0-9a-f]+|-) +[0-9a-f]+ +([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const indent = line.length - m[3].length;
    const name = m[3].trimStart();
    const column = indent + (m[3].length - name.length);
    if (column === 27) output = name;
    else if (column === 35 && (output === '.rodata' || output === '.data') && m[1] !== '-') {
      const start = parseInt(m[1], 16);
      const size = parseInt(m[2], 16);
      if (size > 0) objects.push({ start, end: start + size, name, strings: MERGED_STRINGS.test(name), symbols: [] });
    } else if (column === 43 && objects.length > 0 && m[1] !== '-') {
      objects.at(-1).symbols.push({ start: parseInt(m[1], 16), end: parseInt(m[1], 16) + parseInt(m[2], 16), name });
    }
  }
  if (objects.length === 0) throw new Error(`split_data: ${file} has no .rodata or .data objects (not a --print-map DATA part?)`);
  // A TU's exception tables are one input section holding one table per function (the
  // GCC_except_tableN symbols, each named only by its own function's landing pad): one object
  // each, when the symbols tile the section.
  for (let k = objects.length - 1; k >= 0; k--) {
    const o = objects[k];
    const parts = o.symbols.sort((a, b) => a.start - b.start);
    const tiles = EXCEPTION_TABLES.test(o.name) && parts.length > 1 && parts[0].start === o.start && parts.at(-1).end === o.end &&
      parts.every((x, i) => x.end > x.start && (i === 0 || x.start === parts[i - 1].end));
    if (tiles) objects.splice(k, 1, ...parts.map((x) => ({ start: x.start, end: x.end, name: `${o.name} ${x.name}`, strings: false, exact: true })));
  }
  objects.sort((a, b) => a.start - b.start);
  for (let k = 1; k < objects.length; k++) {
    if (objects[k].start < objects[k - 1].end) throw new Error(`split_data: ${file}: ${objects[k].name} overlaps ${objects[k - 1].name}`);
  }
  return objects;
}

/** The units that can move: each object, and each NUL-terminated string of a merged string section. */
function unitsOf(objects, mem) {
  const units = [];
  for (const o of objects) {
    if (!o.strings) {
      units.push({ start: o.start, end: o.end, object: o });
      continue;
    }
    let s = o.start;
    for (let p = o.start; p < o.end; p++) {
      if (mem[p] === 0) {
        units.push({ start: s, end: p + 1, object: o });
        s = p + 1;
      }
    }
    if (s < o.end) units.push({ start: s, end: o.end, object: o });
  }
  return units;
}

/** file -> its far-back references, read once per build (the core engines share objects). */
const relocationsSeen = new Map();

/**
 * The data references of the linked objects that name a symbol further back than the window
 * (a folded `table[i - k]`: musl's vfprintf `states - 65`, the MessagePack parser's
 * `trail - 784`): their relocations (llvm-objdump), for every object and archive the map names
 * (paths relative to `buildDir`). [{ symbol, addend }], addend < -WINDOW.
 */
export function farBackReferences(objects, buildDir) {
  const files = new Set();
  for (const o of objects) {
    const m = /^(.*?)(?:\([^()]*\))?:\(/.exec(o.name);
    if (m && !m[1].startsWith('<')) files.add(m[1].startsWith('/') ? m[1] : `${buildDir}/${m[1]}`);
  }
  const out = [];
  for (const file of files) {
    if (!relocationsSeen.has(file)) {
      const text = execFileSync('llvm-objdump-14', ['-r', file], { maxBuffer: 1 << 30 }).toString();
      relocationsSeen.set(file, [...text.matchAll(/R_WASM_MEMORY_ADDR_\w+\s+(\S+?)-(\d+)$/gm)]
        .filter((m) => Number(m[2]) > WINDOW).map((m) => ({ symbol: m[1], addend: -Number(m[2]) })));
    }
    out.push(...relocationsSeen.get(file));
  }
  return out;
}

/**
 * Every constant address in the code of a module that may be dereferenced before the deferred
 * module is instantiated (wasm-dis's text; the data segments' lines skipped): every `i32.const`
 * and load/store `offset=`, except the operands of a call of a deferred function. Such a call is a
 * `call_indirect` whose callee is a constant table slot holding a stub (split_stubs.mjs: the
 * slots of deferred functions), and an address that is one of its operands directly (an error
 * message handed to an out-of-line thrower, say) is dereferenced only by code that runs after the
 * call has instantiated the deferred module, which writes the moved data. The slot constant itself
 * is a table index, not an address. An address that also appears anywhere else is kept.
 * Two kinds of lone `(i32.const N)` operand are read more closely (a constant integer of the code
 * that happens to fall in the data would otherwise keep a table: 0xDC00, a UTF-16 surrogate the
 * JSON lexer compares with, kept libc's 2.7 KB __rem_pio2_large table):
 *   - the operand of an i32 comparison (eq, ne, lt, gt, le, ge): a comparison reads no memory,
 *     and the pointer it compares with was formed from an address found elsewhere (or from
 *     one past the object's end, which moveData also reads as naming the object);
 *   - the address operand of a load or store (its first child): the access reads or writes
 *     exactly N + offset and the bytes after it, so its first and last byte go to `exact`,
 *     which names their objects without the WINDOW of folded indices (an index would be an
 *     `i32.add` under the load, not a constant).
 *   - the base of a scaled index, `(i32.add (i32.shl x (i32.const k)) (i32.const N))` in either
 *     order, x not a subtraction or a negative constant: it stays in `any` (the window of folded
 *     indices before an object still applies), but
 *     unless N also appears some other way it is left out of `ends`, the constants that may be
 *     one past an object's end (moveData): a table indexed forward from N reads the object that
 *     starts at N, not the one that ends there (the kept itoa table __pow10_32 kept the
 *     libc++ regex messages' table that ends where it starts, and the messages: 0.7 KB gzip).
 * Returns { any, exact, ends }: the constants of the general rule, the exact accesses, and the
 * constants that can name the object ending there.
 */
export function codeConstants(file, features) {
  const text = execFileSync('wasm-dis', [file, ...features], { maxBuffer: 1 << 30 }).toString();
  const lines = text.split('\n');
  const stubs = new Set();
  for (const line of lines) {
    const m = /^ \(export "~[^"]*" \(func (\$\S+)\)\)$/.exec(line);
    if (m) stubs.add(m[1]);
  }
  const deferredSlots = new Set();
  for (const line of lines) {
    const m = /^ \(elem (?:\$\S+ )?\(i32\.const (\d+)\)((?: \$\S+)*)\)$/.exec(line);
    if (!m) continue;
    m[2].trim().split(' ').forEach((fn, i) => {
      if (stubs.has(fn)) deferredSlots.add(Number(m[1]) + i);
    });
  }
  const out = new Set();
  const exact = new Set();
  // constants seen other than as the base of a scaled index (see above), and the open
  // i32.add nodes' operands: { consts: [N...], shl: a `(i32.shl ... (i32.const k))` operand, kids }
  const plain = new Set();
  const adds = new Map();
  const shlOf = new Map(); // an add's (i32.shl ...) operand node -> that add
  // The node open at each indentation (binaryen prints one level per space), and the direct
  // children of each open call_indirect: [{ value }] for a `(i32.const N)` line, null otherwise.
  const open = [];
  const calls = new Map();
  // Per open node (by its line): its head (`i32.load offset=8`, ...) and its children so far.
  const heads = new Map();
  const finish = (node) => {
    const kids = calls.get(node);
    calls.delete(node);
    const last = kids.at(-1);
    const deferredCall = last != null && deferredSlots.has(last.value);
    for (const k of kids) {
      if (k && !deferredCall) {
        out.add(k.value);
        plain.add(k.value);
      }
    }
  };
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    if (line.startsWith(' (data ')) continue;
    const indent = line.length - line.trimStart().length;
    // nodes at this indentation or deeper are closed
    while (open.length > indent) {
      const node = open.pop();
      if (node !== undefined && calls.has(node)) finish(node);
      if (node !== undefined && adds.has(node)) {
        const a = adds.get(node);
        adds.delete(node);
        if (!(a.shl && !a.backward && a.kids === 2 && a.consts.length === 1)) for (const c of a.consts) plain.add(c);
      }
    }
    const opens = line.trimStart().startsWith('(');
    const parent = open[indent - 1];
    const child = opens && parent !== undefined && calls.has(parent);
    const lone = /^\s*\(i32\.const (-?\d+)\)$/.exec(line);
    const head = parent === undefined ? undefined : heads.get(parent);
    const index = head === undefined ? -1 : head.kids++;
    const access = lone && index === 0 ? ACCESS.exec(head.text) : null;
    const add = parent === undefined ? undefined : adds.get(parent);
    if (add && opens) {
      add.kids++;
      if (lone) add.consts.push(Number(lone[1]) >>> 0);
      else if (/^\s*\(i32\.shl$/.test(line)) {
        add.shl = true;
        shlOf.set(n, add);
      }
    }
    // the shifted operand of such a shl: a negation or difference (`end[-k]`, `end[i - n]`) or a
    // negative constant indexes backwards from N, so N keeps the object ending there
    const shl = parent === undefined ? undefined : shlOf.get(parent);
    if (shl && opens && index === 0 && (/^\s*\(i32\.sub$/.test(line) || (lone && Number(lone[1]) < 0))) shl.backward = true;
    if (lone && child) {
      calls.get(parent).push({ value: Number(lone[1]) >>> 0 });
    } else if (lone && head && COMPARISON.test(head.text)) {
      // an operand of a comparison: not dereferenced
    } else if (access) {
      const [, type, narrow, offset] = access;
      const at = (Number(lone[1]) + Number(offset ?? 0)) >>> 0;
      const width = narrow ? Number(narrow) / 8 : WIDTH[type];
      exact.add(at);
      exact.add((at + width - 1) >>> 0); // its last byte (the next unit's, if it crosses)
      if (offset) {
        out.add(Number(offset) >>> 0);
        plain.add(Number(offset) >>> 0);
      }
    } else {
      if (child) calls.get(parent).push(null);
      for (const m of line.matchAll(/i32\.const (-?\d+)|offset=(\d+)/g)) {
        const v = Number(m[1] ?? m[2]) >>> 0;
        out.add(v);
        // (a lone operand of an i32.add is decided when the add closes)
        if (!(lone && add)) plain.add(v);
      }
    }
    if (opens) {
      open.length = indent + 1;
      open[indent] = n;
      heads.set(n, { text: line.trimStart(), kids: 0 });
      if (/^\s*\(call_indirect\b/.test(line)) calls.set(n, []);
      if (/^\s*\(i32\.add$/.test(line)) adds.set(n, { consts: [], shl: false, kids: 0 });
    }
  }
  for (const node of calls.keys()) finish(node);
  for (const a of adds.values()) for (const c of a.consts) plain.add(c);
  return { any: out, exact, ends: plain };
}
// Heads of the nodes whose lone constant operands codeConstants reads closely.
const COMPARISON = /^\(i32\.(?:eq|ne|[lg][te]_[su])$/;
// A load or store head: its value type, the narrow access size in bits (i64.load32_u: 32), its
// offset. The bytes it accesses: the narrow size, else the type's (WIDTH).
const ACCESS = /^\((i32|i64|f32|f64|v128)\.(?:load|store)(?:(8|16|32)(?:_[su])?)?(?: offset=(\d+))?(?: align=\d+)?$/;
const WIDTH = { i32: 4, f32: 4, i64: 8, f64: 8, v128: 16 };

/**
 * Moves the data only the deferred module's functions use out of `primary` into `deferred`
 * (both rewritten in place). `alsoReaching` lists other modules ([file, wasm-dis flags]) that
 * will get the same data (replaceData): what their code reaches stays too. `buildDir` resolves
 * the map's object paths (farBackReferences). Returns the primary's new data section (`data`,
 * `segments`, `original`: for replaceData), the bytes moved and kept, and what checkTouched
 * needs (`lo`, `hi`, `goMask`, `objects`); throws when a check fails.
 */
export function moveData({ mapFile, buildDir, primary, deferred, features, alsoReaching = [] }) {
  const p = readFileSync(primary);
  const d = readFileSync(deferred);
  const segments = dataSegments(p, primary);
  const mem = image(segments);
  const objects = mapObjects(readFileSync(mapFile, 'utf8'), mapFile);
  const lo = objects[0].start;
  const hi = objects.at(-1).end;
  // The map must describe this module: every data byte lies in an object of the map.
  let k = 0;
  for (const s of segments) {
    for (let a = s.offset; a < s.offset + s.bytes.length; a++) {
      if (mem[a] === 0) continue;
      while (k < objects.length && objects[k].end <= a) k++;
      if (k === objects.length || objects[k].start > a) {
        throw new Error(`split_data: ${primary} has data at ${a} outside every object of ${mapFile}: the map is not this link's`);
      }
    }
  }
  const units = unitsOf(objects, mem);
  const starts = units.map((u) => u.start);
  const unitAt = (a) => {
    let l = 0;
    let h = starts.length - 1;
    while (l < h) {
      const m = (l + h + 1) >> 1;
      if (starts[m] <= a) l = m;
      else h = m - 1;
    }
    return starts[l] <= a && a < units[l].end ? l : -1;
  };
  const kept = new Uint8Array(units.length);
  const work = [];
  const keep = (j) => {
    if (j >= 0 && !kept[j]) {
      kept[j] = 1;
      work.push(j);
    }
  };
  // A string is read forward from the address that names it to its NUL, so an address inside
  // a string (a shorter literal the linker merged into its tail: "targets" at the end of "... got
  // float32 targets") keeps only the bytes from there on: the first such address of each string.
  const keptFrom = new Map();
  const keepAt = (a) => {
    const j = unitAt(a);
    if (j < 0) return;
    if (!units[j].object.strings) keep(j);
    else if (!(keptFrom.get(j) <= a)) keptFrom.set(j, a);
  };
  const { any: constants, exact, ends } = codeConstants(primary, features);
  for (const [file, flags] of alsoReaching) {
    const more = codeConstants(file, flags);
    for (const a of more.any) constants.add(a);
    for (const a of more.exact) exact.add(a);
    for (const a of more.ends) ends.add(a);
  }
  for (const a of exact) if (a >= lo && a < hi) keepAt(a);
  // A constant one past an object's end keeps that object: code that walks a table backwards
  // starts from its end (`for (p = table + n; p != table;) *--p`), and the table's start may then
  // appear only as an operand of a comparison, which names nothing (codeConstants; helper-80's
  // review found this with clang -O2 and std::find over reverse iterators).
  // Not a string's piece: its end is where the next string starts, which every literal names.
  const endingAt = new Map(units.flatMap((u, j) => (u.object.strings ? [] : [[u.end, j]])));
  for (const a of ends) if (endingAt.has(a)) keep(endingAt.get(a));
  // (the objects the rule above no longer keeps because their end is only a scaled index's
  // base: reported by the build, so that what this exemption moves is seen)
  const exempt = [...constants].filter((a) => endingAt.has(a) && !ends.has(a)).map((a) => endingAt.get(a));
  // The first unit starting after a (binary search).
  const after = (a) => {
    let l = 0;
    let h = starts.length;
    while (l < h) {
      const m = (l + h) >> 1;
      if (starts[m] <= a) l = m + 1;
      else h = m;
    }
    return l;
  };
  for (const a of constants) {
    if (a < lo - WINDOW || a >= hi) continue;
    keepAt(a);
    // objects starting just after the address (an index folded into the constant)
    for (let j = after(a); j < units.length && units[j].start <= a + WINDOW; j++) {
      if (!units[j].object.strings && !units[j].object.exact) keep(j);
    }
  }
  // A constant that is a far-back reference of the linked objects (symbol - k, k > WINDOW)
  // keeps the symbol's object: the data section named .rodata.<symbol> (or .data., .bss.).
  const bySymbol = new Map();
  for (const o of objects) {
    const m = /:\(\.(?:rodata|data|bss)\.(.+)\)$/.exec(o.name);
    if (m) bySymbol.set(m[1], [...(bySymbol.get(m[1]) ?? []), o]);
  }
  let farKept = 0;
  for (const { symbol, addend } of farBackReferences(objects, buildDir)) {
    for (const o of bySymbol.get(symbol) ?? []) {
      if (!constants.has((o.start + addend) >>> 0)) continue;
      const j = unitAt(o.start);
      if (j >= 0 && !kept[j]) farKept++;
      keep(j);
    }
  }
  while (work.length > 0) {
    const u = units[work.pop()];
    if (u.object.strings) continue;
    for (let a = (u.start + 3) & ~3; a + 4 <= u.end; a += 4) {
      const v = (mem[a] | (mem[a + 1] << 8) | (mem[a + 2] << 16) | (mem[a + 3] << 24)) >>> 0;
      if (v >= lo && v <= hi) {
        keepAt(v);
        if (v === hi || unitAt(v) < 0) keepAt(v - 1); // one past the end of an object
      }
    }
  }
  const stay = new Uint8Array(mem);
  const go = new Uint8Array(mem.length);
  const goMask = new Uint8Array(mem.length);
  let movedBytes = 0;
  units.forEach((u, j) => {
    if (kept[j]) return;
    const end = keptFrom.get(j) ?? u.end; // a string's bytes before its first named address
    if (end <= u.start) return;
    go.set(mem.subarray(u.start, end), u.start);
    goMask.fill(1, u.start, end);
    stay.fill(0, u.start, end);
    movedBytes += end - u.start;
  });
  const stays = cut(stay, 0, stay.length, goMask.map((x) => 1 - x));
  // The deferred module's segments write moved units only: instantiated after the program has
  // run, a segment spanning a kept object (zero bytes included) would reset what was written there.
  const goes = cut(go, 0, go.length, goMask);
  // The two halves are the original image, with no byte in both.
  const a = image(stays);
  const b = image(goes);
  for (let i = 0; i < mem.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if ((x !== 0 && y !== 0) || (x | y) !== mem[i]) throw new Error(`split_data: the halves of ${primary}'s data differ from it at ${i}`);
  }
  for (const [list, moved, what] of [[goes, 1, 'deferred'], [stays, 0, 'primary']]) {
    for (const g of list) {
      for (let i = g.offset; i < g.offset + g.bytes.length; i++) {
        if (goMask[i] !== moved) throw new Error(`split_data: a ${what} data segment covers byte ${i}, which is ${moved ? 'not ' : ''}moved`);
      }
    }
  }
  // The primary: its data section replaced, the data count with it.
  const data = section(11, dataPayload(stays));
  writeFileSync(primary, withData(p, data, stays.length, primary));
  // The deferred module: a data count section before its code and a data section after it.
  const ds = sectionsOf(d, deferred);
  if (ds.some((s) => s.id === 11 || s.id === 12)) throw new Error(`split_data: ${deferred} already has data`);
  const code = ds.find((s) => s.id === 10);
  writeFileSync(deferred, Buffer.concat([
    d.subarray(0, code.head), section(12, Buffer.from(encLeb(goes.length))), d.subarray(code.head, code.end),
    section(11, dataPayload(goes)), d.subarray(code.end),
  ]));
  for (const f of [primary, deferred]) {
    if (!WebAssembly.validate(readFileSync(f))) throw new Error(`split_data: ${f} does not validate after the data move`);
  }
  const endExempt = exempt.filter((j) => !kept[j]).map((j) => units[j].object.name);
  return { data, segments: stays.length, moved: movedBytes, kept: mem.length - movedBytes, original: sectionBytes(p, 11),
    lo, hi, goMask, objects, farKept, endExempt };
}

function sectionBytes(b, id) {
  const s = sectionsOf(b).find((x) => x.id === id);
  return s ? b.subarray(s.head, s.end) : null;
}

function withData(b, data, count, file) {
  const ss = sectionsOf(b, file);
  const dataSec = ss.find((s) => s.id === 11);
  const countSec = ss.find((s) => s.id === 12);
  if (!dataSec || !countSec) throw new Error(`split_data: ${file} has no data or data count section`);
  return Buffer.concat([
    b.subarray(0, countSec.head), section(12, Buffer.from(encLeb(count))), b.subarray(countSec.end, dataSec.head),
    data, b.subarray(dataSec.end),
  ]);
}

/** Gives `file` (a primary module whose data section is `original`) the data section `data` of moveData. */
export function replaceData(file, { data, segments, original }) {
  const b = readFileSync(file);
  const own = sectionBytes(b, 11);
  if (!own || !own.equals(original)) throw new Error(`split_data: ${file}'s data section is not the SIMD128 primary's: it cannot share the data move`);
  writeFileSync(file, withData(b, data, segments, file));
}

/**
 * The dynamic check of a move: `accesses` ({ loads, stores }: the distinct [address, bytes] of a
 * workload's loads and stores that touch the data, recorded by scripts/split_profile.mjs --loads
 * on the unsplit module instrumented by binaryen's --instrument-memory). That workload ran only
 * primary functions, so none of its loads may read moved data: a load every byte of which is
 * moved fails the check. A load that also covers kept bytes reads past the end of a kept string
 * (musl's word-at-a-time strlen and memcmp do) and passes. A store to a moved byte fails.
 * Throws naming the object.
 */
export function checkTouched(accesses, { goMask, objects, lo, hi }, label) {
  const name = (a) => objects.find((x) => x.start <= a && a < x.end)?.name ?? 'no object';
  for (const [kind, list] of [['load', accesses.loads], ['store', accesses.stores]]) {
    for (const [address, bytes] of list) {
      const inData = [];
      for (let a = Math.max(address, lo); a < Math.min(address + bytes, hi); a++) inData.push(a);
      const moved = inData.filter((a) => goMask[a]);
      if (moved.length > 0 && (kind === 'store' || moved.length === inData.length)) {
        throw new Error(`split_data: ${label}: the workload's ${bytes}-byte ${kind} at ${address} touches ${name(moved[0])}, which moved to the deferred module`);
      }
    }
  }
}
