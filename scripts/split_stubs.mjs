// The placeholders of a split engine's initial module, made at init() instead of shipped (issue 17).
// Run by scripts/split_wasm.mjs on each initial module right after wasm-split.
//
// wasm-split (binaryen 108) leaves, in every table slot of a deferred function, an import of its
// own: ("placeholder", "<slot>"), which Emscripten's glue answers with a JS function that loads the
// deferred module. The core engine's initial module carries 2,490 of them: 47 KB of import section
// (7.1 KB gzip -9) and their indices in the element section (about 4 KB gzip -9), about 11 KB of
// the training page. This step takes them out:
//   1. for each signature the placeholders have, one stub function of that type (body:
//      `unreachable`), exported as "~<params>_<results>" (i i32, j i64, f f32, d f64, v v128:
//      "~ii_i" is (i32, i32) -> i32);
//   2. each placeholder's slot in the element section names the stub of its signature instead, so
//      the slots of a signature repeat one index (which compresses to almost nothing);
//   3. `wasm-opt --remove-unused-module-elements` drops the placeholder imports, no longer used,
//      and renumbers the functions (table slots, export names and code are kept: the deferred
//      module imports the initial one's functions by export name and writes table slots).
// At init(), before the engine's constructors run, bindings/js/deferred.ts (installPlaceholders)
// finds the stubs in the table and puts in each such slot a function of the same signature,
// compiled there from a few bytes per slot, that loads the deferred module and calls the slot
// again (the deferred module's element segment has replaced it by then).
//
//   node scripts/split_stubs.mjs X.wasm [features...]   (rewrites X.wasm in place; prints counts)
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { activeSegmentOffset, encLeb, encSleb32, leb, sectionEntries, sectionsOf } from './split_data.mjs';

/** The prefix of a stub's export name; bindings/js/deferred.ts reads the signature after it. */
export const STUB_PREFIX = '~';
/** The value types a stub's name spells, by their binary code. */
const VALTYPE = { 0x7f: 'i', 0x7e: 'j', 0x7d: 'f', 0x7c: 'd', 0x7b: 'v' };

export function readName(b, i) {
  const [n, start] = leb(b, i);
  return [b.subarray(start, start + n).toString('utf8'), start + n];
}

const vec = (items) => [...encLeb(items.length), ...items.flat()];
const str = (s) => vec([...Buffer.from(s, 'utf8')]);

/** Each function type's signature as a stub name spells it ("ii_i"); null where it cannot. */
function signatures(b, sec) {
  let [n, i] = leb(b, sec.start);
  const out = [];
  while (n-- > 0) {
    if (b[i++] !== 0x60) throw new Error('split_stubs: a type that is not a function type');
    const part = () => {
      let count;
      [count, i] = leb(b, i);
      let s = '';
      let ok = true;
      while (count-- > 0) {
        const t = VALTYPE[b[i++]];
        if (t === undefined) ok = false;
        else s += t;
      }
      return ok ? s : null;
    };
    const params = part();
    const results = part();
    out.push(params === null || results === null ? null : `${params}_${results}`);
  }
  return out;
}

/** Limits at b[i] (a table's or a memory's): [{ flags, min, max }, next]; max is null when absent. */
export function readLimits(b, i) {
  const flags = b[i++];
  let min;
  let max = null;
  [min, i] = leb(b, i);
  if (flags & 1) [max, i] = leb(b, i);
  return [{ flags, min, max }, i];
}

/** The import section's entries: [{ module, name, kind, desc (the bytes after the kind) }]. */
export function importsOf(b, file = 'module', sec = sectionsOf(b, file).find((s) => s.id === 2)) {
  if (!sec) return [];
  let [n, i] = leb(b, sec.start);
  const out = [];
  while (n-- > 0) {
    let module;
    let field;
    [module, i] = readName(b, i);
    [field, i] = readName(b, i);
    const kind = b[i++];
    const start = i;
    if (kind === 0) [, i] = leb(b, i); // function: type index
    else if (kind === 1) [, i] = readLimits(b, i + 1); // table: reftype, limits
    else if (kind === 2) [, i] = readLimits(b, i); // memory: limits
    else if (kind === 3) i += 2; // global: valtype, mutability
    else if (kind === 4) [, i] = leb(b, i + 1); // tag: attribute, type
    else throw new Error(`split_stubs: ${file}: an import of unknown kind ${kind}`);
    out.push({ module, name: field, kind, desc: [...b.subarray(start, i)] });
  }
  return out;
}

/** The function imports of a module: [{ module, name, type }] in function index order. */
export function functionImports(b, sec = sectionsOf(b).find((s) => s.id === 2)) {
  return importsOf(b, 'module', sec).filter((imp) => imp.kind === 0)
    .map((imp) => ({ module: imp.module, name: imp.name, type: leb(Buffer.from(imp.desc), 0)[0] }));
}

/** The export section's entries: [{ name, kind, index }]. */
export function exportsOf(b, file = 'module') {
  return sectionEntries(b, file, 7, (bytes, at) => {
    const [name, i] = readName(bytes, at);
    const kind = bytes[i];
    const [index, next] = leb(bytes, i + 1);
    return [{ name, kind, index }, next];
  });
}

/**
 * The active element segments of a module (table 0, i32.const offsets): [{ offset, funcs }].
 * @throws Error on any other kind of segment (wasm-split writes none)
 */
export function elementSegments(b, file = 'module') {
  return sectionEntries(b, file, 9, (bytes, at) => {
    let [offset, i] = activeSegmentOffset(bytes, at, `split_stubs: ${file}: an element segment`);
    let count;
    [count, i] = leb(bytes, i);
    const funcs = [];
    while (count-- > 0) {
      let f;
      [f, i] = leb(bytes, i);
      funcs.push(f);
    }
    return [{ offset, funcs }, i];
  });
}

/**
 * The module `b` (its sections `secs`, as sectionsOf reads them) with the payload of each
 * section id in `payload` (an array of bytes or a Buffer) replaced; custom sections kept.
 */
export function withPayloads(b, secs, payload) {
  const parts = [b.subarray(0, 8)];
  for (const s of secs) {
    const p = s.id !== 0 ? payload[s.id] : undefined;
    if (p) parts.push(Buffer.from([s.id, ...encLeb(p.length)]), Buffer.from(p));
    else parts.push(b.subarray(s.head, s.end));
  }
  return Buffer.concat(parts);
}

/** The element section's payload for `segments` ([{ offset, funcs }], as elementSegments reads them). */
export function elementPayload(segments) {
  return vec(segments.map(({ offset, funcs }) => [0x00, 0x41, ...encSleb32(offset), 0x0b, ...vec(funcs.map(encLeb))]));
}

/**
 * The table slots of a module's element segments that hold one of its stubs (exports named
 * STUB_PREFIX + signature), for tests: [{ slot, signature }].
 */
export function stubSlots(b, file = 'module') {
  const stubAt = new Map();
  for (const { name, kind, index } of exportsOf(b, file)) {
    if (kind === 0 && name.startsWith(STUB_PREFIX)) stubAt.set(index, name.slice(STUB_PREFIX.length));
  }
  const out = [];
  for (const { offset, funcs } of elementSegments(b, file)) {
    funcs.forEach((f, k) => { if (stubAt.has(f)) out.push({ slot: offset + k, signature: stubAt.get(f) }); });
  }
  return out;
}

/**
 * Replaces the placeholder imports of the initial module `file` by one exported stub per
 * signature (see the file comment), in place.
 * @param {string} file an initial module written by wasm-split
 * @param {string[]} features wasm-opt's --enable-* flags for it
 * @param {string} [deferred] the deferred module: every placeholder slot must be one it writes
 * @returns {{ placeholders: number, stubs: number, slots: number[] }} the placeholder imports
 *   removed, the stubs added, the table slots that hold a stub
 * @throws Error if a placeholder has a type a stub cannot name, the deferred module leaves a
 *   placeholder slot unwritten, or wasm-opt leaves a placeholder import behind
 */
export function stubPlaceholders(file, features, deferred = null) {
  const b = readFileSync(file);
  const secs = sectionsOf(b, file);
  const sec = (id) => secs.find((s) => s.id === id);
  const sigs = signatures(b, sec(1));
  const imports = functionImports(b, sec(2));
  const [defined] = leb(b, sec(3).start);
  // The stub of each signature, numbered after every function the module has.
  const stubs = new Map(); // signature -> { type, index }
  const placeholderSig = new Map(); // function index -> signature
  imports.forEach((imp, index) => {
    if (imp.module !== 'placeholder') return;
    const sig = sigs[imp.type];
    if (sig === null) throw new Error(`split_stubs: ${file}: placeholder ${imp.name} has a type a stub cannot name`);
    placeholderSig.set(index, sig);
    if (!stubs.has(sig)) stubs.set(sig, { type: imp.type, index: imports.length + defined + stubs.size });
  });
  if (placeholderSig.size === 0) return { placeholders: 0, stubs: 0, slots: [] };

  const slots = [];
  const segments = elementSegments(b, file).map(({ offset, funcs }) => ({
    offset,
    funcs: funcs.map((f, k) => {
      const sig = placeholderSig.get(f);
      if (sig === undefined) return f;
      slots.push(offset + k);
      return stubs.get(sig).index;
    }),
  }));
  if (deferred) {
    const written = new Set();
    for (const { offset, funcs } of elementSegments(readFileSync(deferred), deferred)) funcs.forEach((_, k) => written.add(offset + k));
    const missing = slots.filter((s) => !written.has(s));
    if (missing.length > 0) throw new Error(`split_stubs: ${deferred} does not write table slots ${missing.slice(0, 5).join(', ')} of placeholders`);
  }

  const payload = {};
  const list = [...stubs];
  // function section: the stubs' types
  {
    const s = sec(3);
    const [, i] = leb(b, s.start);
    payload[3] = [...encLeb(defined + list.length), ...b.subarray(i, s.end), ...list.flatMap(([, st]) => encLeb(st.type))];
  }
  // code section: the stubs' bodies (no locals; unreachable; end)
  {
    const s = sec(10);
    const [n, i] = leb(b, s.start);
    if (n !== defined) throw new Error(`split_stubs: ${file}: ${n} bodies for ${defined} functions`);
    payload[10] = Buffer.concat([Buffer.from(encLeb(n + list.length)), b.subarray(i, s.end), Buffer.from(list.flatMap(() => [3, 0x00, 0x00, 0x0b]))]);
  }
  // export section: "~<signature>" for each stub
  {
    const s = sec(7);
    if (!s) throw new Error(`split_stubs: ${file} has no export section`);
    const [n, i] = leb(b, s.start);
    payload[7] = [...encLeb(n + list.length), ...b.subarray(i, s.end),
      ...list.flatMap(([sig, st]) => [...str(`${STUB_PREFIX}${sig}`), 0x00, ...encLeb(st.index)])];
  }
  // element section: placeholders' slots name their stub
  payload[9] = elementPayload(segments);

  const tmp = `${file}.stubs.wasm`;
  writeFileSync(tmp, withPayloads(b, secs, payload));
  try {
    execFileSync('wasm-opt', [tmp, '--remove-unused-module-elements', '-o', file, ...features], { stdio: ['ignore', 'pipe', 'pipe'] });
  } finally {
    rmSync(tmp, { force: true });
  }
  const left = functionImports(readFileSync(file)).filter((imp) => imp.module === 'placeholder').length;
  if (left > 0) throw new Error(`split_stubs: ${file}: ${left} placeholder imports are still used after the element section names stubs`);
  return { placeholders: placeholderSig.size, stubs: list.length, slots };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, ...features] = process.argv.slice(2);
  const r = stubPlaceholders(file, features.length ? features : ['--enable-simd', '--enable-exception-handling',
    '--enable-bulk-memory', '--enable-sign-ext', '--enable-mutable-globals', '--enable-nontrapping-float-to-int']);
  console.log(`${file}: ${r.placeholders} placeholder imports -> ${r.stubs} stubs in ${r.slots.length} slots`);
}
